/**
 * An ISO 8601 date or time given by a caller (`?from=`/`?to=` of the request-log export and the
 * audit log, a key's `expiresAt`), as epoch ms. Any ISO 8601 form is taken: a calendar date (its
 * midnight UTC), a time with or without seconds, `Z` or an offset; other text is a 400 naming it.
 */
import * as z from "zod";

export const isoInstant = (name: string) =>
  z
    .string({ error: `'${name}' is required: an ISO 8601 date or time, e.g. 2026-01-31T00:00:00Z` })
    .refine((v) => /^\d{4}-\d{2}-\d{2}/.test(v) && Number.isFinite(Date.parse(v)), `'${name}' must be an ISO 8601 date or time, e.g. 2026-01-31T00:00:00Z`)
    .transform((v) => Date.parse(v));

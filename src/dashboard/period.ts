/**
 * The period of the Requests and Usage pages: whole UTC days, as their date fields send them. A
 * typed or shared link may carry an ISO 8601 time instead (the form the usage download and the
 * log export take, or a time copied from a record): the page shows the UTC day it falls in.
 * Anything else comes back with the reason, never silently swapped for the default period.
 */
import * as z from "zod";

/** A page query's `from` or `to` as sent (read by `periodDay`, which names one that is neither a day nor a time). */
export const periodParam = z.string().trim().max(100).optional().catch(undefined);

/** A query's `from` or `to`: absent (the page's default), a UTC day, or the reason it is neither. */
export type PeriodDay = { ok: true; day: string | undefined } | { ok: false; message: string };

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function periodDay(value: string | undefined, name: "from" | "to"): PeriodDay {
  const v = value?.trim() ?? "";
  if (v === "") return { ok: true, day: undefined };
  const ms = Date.parse(v);
  // A calendar day that does not exist (2026-02-30) parses to another one: it must read back as written.
  if (DAY.test(v) && Number.isFinite(ms) && utcDay(ms) === v) return { ok: true, day: v };
  if (TIME.test(v) && Number.isFinite(ms)) return { ok: true, day: utcDay(ms) };
  return { ok: false, message: `'${name}' must be a UTC date written YYYY-MM-DD, or an ISO 8601 time such as 2026-01-31T10:00:00Z (got '${value}').` };
}

/** Both ends of a page's period, or the first end that is neither a day nor a time. */
export function periodDays(q: { from?: string | undefined; to?: string | undefined }): { ok: true; from: string | undefined; to: string | undefined } | { ok: false; message: string } {
  const from = periodDay(q.from, "from");
  if (!from.ok) return from;
  const to = periodDay(q.to, "to");
  if (!to.ok) return to;
  return { ok: true, from: from.day, to: to.day };
}

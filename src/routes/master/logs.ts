/**
 * Master API: the organization's raw request records (contract sections 7 and 8). `GET /v1/master/logs?
 * from=&to=` streams them as NDJSON (`Accept: text/csv`: CSV), hour by hour, from R2 and the D1
 * window (src/usage/log-export.ts). An empty period is 200 with no lines. `GET /v1/master/logs/{requestId}`
 * is one record with its kept bodies (src/usage/request-record.ts).
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { notFound } from "../../errors/api-error";
import { validate } from "../../errors/validation";
import { exportContentType, exportFormat, exportStream, periodQuery } from "../../usage/log-export";
import { findRequestRecord } from "../../usage/request-record";

export const masterLogRoutes = new Hono<AppEnv>();

masterLogRoutes.get("/", validate("query", periodQuery), (c) => {
  const { from, to } = c.req.valid("query");
  const format = exportFormat(c.req.header("accept"));
  const body = exportStream(c.env, { organizationId: c.get("master").organizationId }, from, to, format);
  return new Response(body, { headers: { "content-type": exportContentType(format), "cache-control": "no-store" } });
});

const requestParam = z.object({ requestId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, "'requestId' must be a request id (the x-request-id header), e.g. req_...") });
/** `at`: when the request started (ISO 8601 or epoch ms); needed only for requests older than the D1 window. */
const recordQuery = z.object({
  at: z
    .string()
    .refine((v) => /^\d{1,15}$/.test(v) || (/^\d{4}-\d{2}-\d{2}/.test(v) && Number.isFinite(Date.parse(v))), "'at' must be an ISO 8601 time or epoch milliseconds")
    .transform((v) => (/^\d+$/.test(v) ? Number(v) : Date.parse(v)))
    .optional(),
});

masterLogRoutes.get("/:requestId", validate("param", requestParam), validate("query", recordQuery), async (c) => {
  const { requestId } = c.req.valid("param");
  const record = await findRequestRecord(c.env, c.get("master").organizationId, requestId, c.req.valid("query").at ?? null);
  if (!record) throw notFound(`Request '${requestId}' not found (older than the request window? pass ?at=<its time>).`);
  c.header("cache-control", "no-store");
  return c.json(record);
});

/**
 * Master API: the organization's raw request records (contract section 7). `GET /v1/master/logs?
 * from=&to=` streams them as NDJSON (`Accept: text/csv`: CSV), hour by hour, from R2 and the D1
 * window (src/usage/log-export.ts). An empty period is 200 with no lines.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { validate } from "../../errors/validation";
import { exportContentType, exportFormat, exportStream, periodQuery } from "../../usage/log-export";

export const masterLogRoutes = new Hono<AppEnv>();

masterLogRoutes.get("/", validate("query", periodQuery), (c) => {
  const { from, to } = c.req.valid("query");
  const format = exportFormat(c.req.header("accept"));
  const body = exportStream(c.env, { organizationId: c.get("master").organizationId }, from, to, format);
  return new Response(body, { headers: { "content-type": exportContentType(format), "cache-control": "no-store" } });
});

/**
 * `x-gateway-overhead-ms` on every answer of the chat doors (chat completions, Messages,
 * Responses), refusals and errors included (contract section 6): the pipeline sets it on the
 * answers it builds; this middleware adds it to every other one (400, 401, 402, 403, 429, upstream
 * failures), as the time spent in the gateway minus the upstream time the error carries.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-types";

export const OVERHEAD_HEADER = "x-gateway-overhead-ms";

/** Upstream time spent before an error was thrown (the pipeline notes it; the middleware subtracts it). */
const upstreamOf = new WeakMap<Error, number>();

export function noteUpstreamMs(err: Error, ms: number): void {
  upstreamOf.set(err, ms);
}

export const gatewayOverhead: MiddlewareHandler<AppEnv> = async (c, next) => {
  const startedAt = Date.now();
  await next();
  if (c.res.headers.has(OVERHEAD_HEADER)) return;
  const upstream = c.error ? (upstreamOf.get(c.error) ?? 0) : 0;
  const overhead = String(Math.max(0, Date.now() - startedAt - upstream));
  try {
    c.res.headers.set(OVERHEAD_HEADER, overhead);
  } catch {
    // Immutable headers: copy the response once.
    const res = new Response(c.res.body, c.res);
    res.headers.set(OVERHEAD_HEADER, overhead);
    c.res = res;
  }
};

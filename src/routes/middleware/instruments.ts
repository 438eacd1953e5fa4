/**
 * The bench instruments' one seam with the request path (docs/architecture.md). The Worker's
 * fetch entry gives a request `worldEnv(env)` (src/lib/debug-world.ts: slowed and traced
 * bindings, only when the world bench configures it); this middleware, once per request, hands
 * the pipeline its probe (`c.var.probe`, the only hook it holds) and stamps the bench headers on
 * the answer: `x-gateway-path-calls`, `x-gateway-path-timing` (path tracing) and
 * `x-gateway-do-calls` (DEBUG_DO_CALLS). Neither is ever configured in production: there the
 * probe is the silent one and the answer goes out untouched, and a deployed bundle is built
 * without the instruments at all (`__BENCH_INSTRUMENTS__`, src/build-flags.d.ts).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-types";
import { isTraced, pathCallsHeader, pathTimingHeader, probeOf } from "../../lib/debug-world";
import { silentProbe } from "../../lib/probe";
import { doCallsHeader } from "../../durable-objects/debug-latency";
import { cancelledEarlyCalls } from "../../billing/early-call";

/** The middleware; app.ts mounts it only where the bundle carries the instruments. */
export const instruments: MiddlewareHandler<AppEnv> = async (c, next) => {
  const env = c.env;
  const traced = isTraced(env);
  // Unconfigured (production, and the bench's peers mode): no probe to hand out (readers default
  // to the silent one) and nothing to stamp, so the route runs without this layer's continuation.
  if (!traced && doCallsHeader(env) === null) return next();
  c.set("probe", traced ? probeOf(env) : silentProbe);
  await next();
  const doCalls = doCallsHeader(env);
  // The answer's headers are released now: the moment `release` and the path calls are read at.
  const now = Date.now();
  const stamps: Array<[string, string | null]> = [
    ["x-gateway-do-calls", doCalls],
    ["x-gateway-path-calls", pathCallsHeader(env, now, cancelledEarlyCalls())],
    ["x-gateway-path-timing", pathTimingHeader(env, now)],
  ];
  let res = c.res;
  try {
    for (const [name, value] of stamps) if (value !== null) res.headers.set(name, value);
  } catch {
    // Immutable headers (a proxied upstream response): copy the response once.
    res = new Response(res.body, res);
    for (const [name, value] of stamps) if (value !== null) res.headers.set(name, value);
    c.res = res;
  }
};

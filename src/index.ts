import type { Env } from "./env";
import { app } from "./app";
import { runScheduled } from "./scheduled";
import { worldEnv } from "./lib/debug-world";
import { consumeLogBatch } from "./usage/log-consumer";
import { consumeDeliveryBatch, DELIVERIES_QUEUE } from "./integrations/deliveries";

export { KeyState } from "./durable-objects/key-state";
export { ProviderMetrics } from "./durable-objects/provider-metrics";
export { McpSseSession } from "./mcp/sse-session";
export { RateLimiter } from "./durable-objects/rate-limiter";
export { OrgCredits } from "./durable-objects/org-credits";

export default {
  // worldEnv: env itself, except in the bench's world-latency mode (src/lib/debug-world.ts); the
  // rest of the bench instruments enter through src/routes/middleware/instruments.ts. A deployed
  // bundle is built without them (src/build-flags.d.ts).
  fetch: (request, env, ctx) => app.fetch(request, __BENCH_INSTRUMENTS__ ? worldEnv(env) : env, ctx),
  scheduled: (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(controller, env));
  },
  // The LOGS queue: request records to R2, the hourly aggregates and the D1 window. DELIVERIES:
  // OpenTelemetry spans and webhook events to their receivers.
  queue: (batch, env) => (batch.queue.startsWith(DELIVERIES_QUEUE) ? consumeDeliveryBatch(batch, env) : consumeLogBatch(batch, env)),
} satisfies ExportedHandler<Env>;

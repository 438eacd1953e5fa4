/**
 * `GET /` health check (spec 2.6, 4.1). Two checks, each bounded by a timeout:
 * - `database`: a real D1 query (`SELECT 1`), with the database's size (`sizeBytes`, as D1 reports
 *   it) and its limit (`limitBytes`, D1_SIZE_LIMIT_BYTES);
 * - `redis`: the counter layer that plays Redis' role here: a round trip to a RateLimiter Durable
 *   Object (which reads its storage) plus a read from the `CACHE` KV namespace.
 * `?skip=redis,database` skips checks; a skipped check reports `connected: false, skipped: true`
 * and does not count against the status (it was not verified, so it is not claimed healthy).
 * 200 with `status: "ok"` when every performed check passed, otherwise 503 with the same shape
 * and `status: "error"`. Error strings are fixed texts: no internals reach the response.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import type { Env } from "../env";
import { validate } from "../errors/validation";
import { d1SizeLimit } from "../usage/storage-watch";
import pkg from "../../package.json";

export const HEALTH_CHECKS = ["redis", "database"] as const;
export type HealthCheckName = (typeof HEALTH_CHECKS)[number];

/** Per-check budget; a health probe must answer even when a dependency hangs. */
const CHECK_TIMEOUT_MS = 3000;
/** Fixed object names, so probes never touch real counters or cache entries. */
const HEALTH_OBJECT = "health:ping";
const HEALTH_KV_KEY = "health:ping";

export interface CheckResult {
  connected: boolean;
  error?: string;
  skipped?: true;
  /** `database`: its size as D1 reports it, and the limit the size watch uses (src/usage/storage-watch.ts). */
  sizeBytes?: number;
  limitBytes?: number;
}

export interface HealthBody {
  message: string;
  version: string;
  health: { status: "ok" | "error"; redis: CheckResult; database: CheckResult };
}

async function withTimeout(work: () => Promise<Partial<CheckResult> | void>, failure: string): Promise<CheckResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ connected: false, error: `${failure}: timed out after ${CHECK_TIMEOUT_MS} ms` }), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work().then((extra): CheckResult => ({ connected: true, ...(extra ?? {}) })), timeout]);
  } catch {
    return { connected: false, error: failure };
  } finally {
    clearTimeout(timer);
  }
}

export const checkDatabase = (env: Env): Promise<CheckResult> =>
  withTimeout(async () => {
    const res = await env.DB.prepare("SELECT 1 AS ok").all<{ ok: number }>();
    if (res.results[0]?.ok !== 1) throw new Error("unexpected result");
    const size = res.meta.size_after;
    return { ...(typeof size === "number" ? { sizeBytes: size } : {}), limitBytes: d1SizeLimit(env) };
  }, "database query failed");

export const checkCounters = (env: Env): Promise<CheckResult> =>
  withTimeout(async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(HEALTH_OBJECT));
    const [pong] = await Promise.all([stub.ping(), env.CACHE.get(HEALTH_KV_KEY)]);
    if (pong !== "pong") throw new Error("unexpected result");
  }, "counter store (Durable Objects / KV) unreachable");

const SKIPPED: CheckResult = { connected: false, skipped: true };

/** The health report and its status code; exported so tests can run it against a broken env. */
export async function healthReport(env: Env, skip: ReadonlySet<HealthCheckName>): Promise<{ body: HealthBody; status: 200 | 503 }> {
  const [redis, database] = await Promise.all([
    skip.has("redis") ? SKIPPED : checkCounters(env),
    skip.has("database") ? SKIPPED : checkDatabase(env),
  ]);
  const healthy = [redis, database].every((r) => r.skipped || r.connected);
  return {
    body: { message: healthy ? "OK" : "Service unhealthy", version: pkg.version, health: { status: healthy ? "ok" : "error", redis, database } },
    status: healthy ? 200 : 503,
  };
}

const healthQuery = z.object({
  skip: z
    .string()
    .optional()
    .transform((s, ctx) => {
      const names = (s ?? "").split(",").map((x) => x.trim()).filter(Boolean);
      const bad = names.find((n) => !(HEALTH_CHECKS as readonly string[]).includes(n));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `unknown check '${bad}'; allowed: ${HEALTH_CHECKS.join(", ")}` });
        return z.NEVER;
      }
      return new Set(names as HealthCheckName[]);
    }),
});

export const healthRoutes = new Hono<AppEnv>();

/** `/health` and `/v1/health` are the paths load balancers and people guess; all three answer alike. */
export const HEALTH_PATHS = ["/", "/health", "/v1/health"] as const;

for (const path of HEALTH_PATHS) {
  healthRoutes.get(path, validate("query", healthQuery), async (c) => {
    const { body, status } = await healthReport(c.env, c.req.valid("query").skip);
    c.header("cache-control", "no-store");
    return c.json(body, status);
  });
}

/**
 * Gateway key authentication (`Authorization: Bearer swb_...` or `x-api-key`).
 *
 * `requireGatewayKey` resolves the KeyContext (isolate cache, else D1) and rejects keys that are
 * unknown, deleted, disabled or expired by the cached data. The liveness/spend decision that must be
 * global (roll, disable on another isolate, limits) is one call to the key's KeyState DO:
 *  - routes that spend (chat, images, videos, moderations) call `admitKey(env, ctx, estimate)` once
 *    they know the estimate (a true upper bound; docs/admission.md), and ask `checkKey(..., {spending})`
 *    before refusing a body or model, so the key's state answers first;
 *  - every other route gets `checkKey` done by the middleware (`{ spend: false }`).
 * Either call refreshes the context when the DO reports a newer version.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-types";
import type { Env } from "../env";
import { ApiError, unauthorized } from "../errors/api-error";
import { fingerprint, looksLikeGatewayKey } from "../lib/crypto";
import { primaryDb, replicaDb } from "../db/client";
import { loadKeyContext, type KeyContext } from "./key-context";
import { cacheContext, evictContext, getCachedContext } from "./key-cache";
import { keyStateStub, snapshotOf, type GateResult } from "../durable-objects/key-state";
import type { Pico } from "../billing/money";
import { leaseVouches, viaLease } from "./leases";

export function extractBearer(c: Context): string | null {
  const auth = c.req.header("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1] ?? null;
  }
  const apiKey = c.req.header("x-api-key");
  return apiKey ? apiKey.trim() : null;
}

export function requireHashSecret(env: Env): string {
  const secret = env.KEY_HASH_SECRET;
  if (!secret) {
    throw new ApiError(503, "The gateway is not configured: KEY_HASH_SECRET is missing.", { type: "api_error", code: "misconfigured" });
  }
  return secret;
}

/** Resolve a presented secret to its context, or throw the precise 401. */
export async function resolveGatewayKey(env: Env, secret: string | null, now = Date.now()): Promise<KeyContext> {
  if (!secret) throw unauthorized("Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key'.", "missing_api_key");
  const hashSecret = requireHashSecret(env);
  if (!looksLikeGatewayKey(secret)) throw unauthorized("Invalid API key.", "invalid_api_key");
  const fp = await fingerprint(hashSecret, secret);
  let ctx = getCachedContext(fp, now);
  // A cached context may only prove a key live: refusals are decided on fresh data, since the key
  // may have been re-enabled or given a new expiry since it was cached.
  if (ctx && !isLocallyLive(ctx, now)) {
    evictContext(fp);
    ctx = undefined;
  }
  if (!ctx) {
    // Near the caller first (a read replica); a replica that lags behind a key created, re-enabled
    // or extended a moment ago must not refuse it, so the primary answers before any 401.
    let found = await loadKeyContext(replicaDb(env.DB), fp);
    if (!found.found || !isLocallyLive(found.context, now)) found = await loadKeyContext(primaryDb(env.DB), fp);
    if (!found.found) {
      throw found.rolled
        ? unauthorized("This API key secret was rolled; use the new secret.", "key_rolled")
        : unauthorized("Invalid API key.", "invalid_api_key");
    }
    ctx = found.context;
    if (isLocallyLive(ctx, now)) cacheContext(fp, ctx);
  }
  assertLocallyLive(ctx, now);
  return ctx;
}

const isLocallyLive = (ctx: KeyContext, now: number): boolean =>
  ctx.key.status === "active" && (ctx.key.expiresAt === null || ctx.key.expiresAt > now);

function assertLocallyLive(ctx: KeyContext, now: number): void {
  const k = ctx.key;
  if (k.status === "deleted") throw unauthorized("This API key has been deleted.", "key_deleted");
  if (k.expiresAt !== null && k.expiresAt <= now) throw unauthorized("This API key has expired.", "key_expired");
  if (k.status !== "active") throw unauthorized("This API key is disabled.", "key_disabled");
}

const DENIAL_CODES: Record<string, string> = {
  deleted: "key_deleted",
  disabled: "key_disabled",
  expired: "key_expired",
  rolled: "key_rolled",
  usage_limit_reached: "usage_limit_reached",
  period_usage_limit_reached: "usage_limit_reached",
};

/**
 * Applies a DO answer: a denial becomes the precise 401 (and evicts the cache entry); a newer
 * version reloads the context from D1. Returns the context to use for the rest of the request.
 */
async function applyGate(env: Env, ctx: KeyContext, gate: GateResult): Promise<KeyContext> {
  if (!gate.ok && gate.reason === "budget_busy") {
    const retryAfter = String(gate.retryAfterSeconds ?? 1);
    throw new ApiError(429, gate.message, { type: "rate_limit_error", code: "budget_busy", headers: { "retry-after": retryAfter } });
  }
  if (!gate.ok) {
    evictContext(ctx.key.fingerprint);
    throw unauthorized(gate.message, DENIAL_CODES[gate.reason] ?? "invalid_api_key");
  }
  if (gate.version === ctx.key.version) return ctx;
  evictContext(ctx.key.fingerprint);
  // The object has the newer version: a replica that does not show it yet is bypassed.
  let fresh = await loadKeyContext(replicaDb(env.DB), ctx.key.fingerprint);
  if (!fresh.found || fresh.context.key.version < gate.version) fresh = await loadKeyContext(primaryDb(env.DB), ctx.key.fingerprint);
  if (!fresh.found) throw unauthorized("This API key has been deleted.", "key_deleted");
  cacheContext(ctx.key.fingerprint, fresh.context);
  assertLocallyLive(fresh.context, Date.now());
  return fresh.context;
}

/**
 * Liveness check through the key's DO (one round trip). `spending`: a key whose settled spend
 * reached a limit is refused too (what a spending route answers before judging the body).
 */
export async function checkKey(env: Env, ctx: KeyContext, opts: { spending?: boolean } = {}): Promise<KeyContext> {
  // A live lease of this isolate vouches for the key's liveness (version and secret) until it expires.
  if (!opts.spending && leaseVouches(leaseName(ctx), ctx.key.version, ctx.key.fingerprint)) return ctx;
  const gate = await keyStateStub(env, ctx.key.id).check(ctx.key.fingerprint, snapshotOf(ctx.key), undefined, opts);
  return applyGate(env, ctx, gate);
}

export interface Admission {
  context: KeyContext;
  /** Pass to `settleKey` once the real cost is known (null never happens for admitted requests). */
  reservationId: string | null;
}

/** Default bound of the wait for in-flight reservations to settle (docs/admission.md). Override: ADMISSION_WAIT_MS. */
const DEFAULT_ADMISSION_WAIT_MS = 3_000;

export function admissionWaitMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).ADMISSION_WAIT_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : DEFAULT_ADMISSION_WAIT_MS;
}

/**
 * Liveness + spend admission with a reservation of `estimate`, a true upper bound of the
 * request's cost: under this isolate's lease of the key when it has room (no round trip), else
 * one round trip to the key's object, which may grant the next lease. Waits (bounded, FIFO) while
 * in-flight reservations hold the budget; 401 only when settled spend reached a limit, 429
 * `budget_busy` past the wait bound (docs/admission.md).
 */
export async function admitKey(env: Env, ctx: KeyContext, estimate: Pico): Promise<Admission> {
  const amount = estimate > 0n ? estimate : 0n;
  const r = await viaLease<GateResult>(
    leaseName(ctx),
    amount,
    { version: ctx.key.version, fingerprint: ctx.key.fingerprint },
    async (close) => {
      const gate: GateResult = await keyStateStub(env, ctx.key.id).admit(ctx.key.fingerprint, snapshotOf(ctx.key), amount, undefined, { waitMs: admissionWaitMs(env), lease: true, close });
      return gate;
    },
    (g) => (g.ok && g.lease ? { lease: g.lease, version: g.version } : null),
  );
  // Steady state: admitted against this isolate's lease, no round trip.
  if ("reservationId" in r) return { context: ctx, reservationId: r.reservationId };
  const gate = r.gate;
  const context = await applyGate(env, ctx, gate);
  return { context, reservationId: gate.ok ? gate.reservationId : null };
}

const leaseName = (ctx: KeyContext): string => `key:${ctx.key.id}`;

/**
 * Middleware: authenticates the gateway key and stores the context as `keyAuth`.
 * `spend: true` leaves the DO round trip to the handler (`admitKey`), which must call it before
 * doing any work; otherwise the middleware performs `checkKey` itself.
 */
export function requireGatewayKey(opts: { spend: boolean }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let ctx = await resolveGatewayKey(c.env, extractBearer(c));
    if (!opts.spend) ctx = await checkKey(c.env, ctx);
    c.set("keyAuth", ctx);
    await next();
  };
}

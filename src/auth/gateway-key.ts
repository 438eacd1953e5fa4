/**
 * Gateway key authentication (`Authorization: Bearer swb_...` or `x-api-key`).
 *
 * `requireGatewayKey` resolves the KeyContext (isolate cache, else D1: a nearby read replica, the
 * primary when the replica's answer would refuse; `readKeyContext`) and rejects keys that are
 * unknown, deleted, disabled or expired by the cached data, then applies the key's IP rules to the
 * client (403 `permission_denied`): every door that takes a key authenticates through
 * `authenticateGatewayKey(env, presentedKey(headers))`, so none answers an outside client
 * (MCP turns the same verdict into tool errors, src/mcp/auth.ts). The liveness/spend decision that must be
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
import { ApiError, permissionDenied, unauthorized } from "../errors/api-error";
import { fingerprint, looksLikeGatewayKey, looksLikeSessionToken, requireHashSecret } from "../lib/crypto";
import { clientIpOf } from "../iam/cidr";
import { evaluateClientIp } from "../iam/evaluate";
import { readKeyContext, readKeyContextOnPrimary, type KeyContext } from "../context/key-context";
import { cacheContext, evictContext, getCachedContext } from "./key-cache";
import { keyStateStub, snapshotOf, type GateResult } from "../durable-objects/key-state";
import type { Pico } from "../billing/money";
import { admissionCallBoundMs, leaseVouches, viaLease } from "./leases";
import { noteConfirmed } from "../context/policy-freshness";
import { awaitRate, hasPendingRate, localHold, recheckRate, releaseTokens, reserveTokens, startRate, tokenHoldNeeded, withTokenHold } from "../rate-limits/admission";
import { admitMember, cancelMember, joinReservations } from "../members/budget";

export function extractBearer(c: Context): string | null {
  return bearerOf(c.req.raw.headers);
}

function bearerOf(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1] ?? null;
  }
  const apiKey = headers.get("x-api-key");
  return apiKey ? apiKey.trim() : null;
}

/** What a request presents to a door that takes a gateway key: the secret and the client IP. */
export interface PresentedKey {
  secret: string | null;
  /** contract section 6 (`clientIpOf`); null when undetermined. */
  clientIp: string | null;
}

export const presentedKey = (headers: Headers): PresentedKey => ({ secret: bearerOf(headers), clientIp: clientIpOf(headers) });

/** The key's IP rules applied to the client: the 403 `permission_denied` of IAM, or null when allowed. */
export function ipRefusal(ctx: KeyContext, clientIp: string | null): ApiError | null {
  const d = evaluateClientIp(ctx, clientIp);
  return d.allowed ? null : permissionDenied(d.message);
}

/**
 * The authentication step of every door that takes a gateway key: the key's context (precise
 * 401s, `resolveGatewayKey`) and its IP rules applied to the client (403).
 */
export async function authenticateGatewayKey(env: Env, presented: PresentedKey, now = Date.now(), opts: { sessions?: boolean } = {}): Promise<KeyContext> {
  const ctx = await resolveGatewayKey(env, presented.secret, now, opts);
  const refused = ipRefusal(ctx, presented.clientIp);
  if (!refused) return ctx;
  // The rules came from the isolate cache or a read replica, either of which may predate a rule
  // change: a refusal is decided on the primary's rules (docs/architecture.md, D1 read replicas).
  evictContext(ctx.key.fingerprint);
  const fresh = await readKeyContextOnPrimary(env.DB, ctx.key.fingerprint);
  if (!fresh.found) throw refused;
  assertLocallyLive(fresh.context, now);
  const still = ipRefusal(fresh.context, presented.clientIp);
  if (still) throw still;
  cacheContext(ctx.key.fingerprint, fresh.context);
  return fresh.context;
}


/**
 * Resolve a presented secret to its context, or throw the precise 401. IP rules are not applied:
 * doors use `authenticateGatewayKey`; MCP applies `ipRefusal` itself (as tool errors).
 */
export async function resolveGatewayKey(env: Env, secret: string | null, now = Date.now(), opts: { sessions?: boolean } = {}): Promise<KeyContext> {
  if (!secret) throw unauthorized("Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key'.", "missing_api_key");
  const hashSecret = requireHashSecret(env);
  // End-user session tokens (src/platform/) are gateway keys of kind `session`, accepted on the
  // `/v1/*` HTTP API only (`sessions`), never on MCP or for OAuth clients.
  if (!looksLikeGatewayKey(secret) && !(opts.sessions === true && looksLikeSessionToken(secret))) throw unauthorized("Invalid API key.", "invalid_api_key");
  const fp = await fingerprint(hashSecret, secret);
  let ctx = getCachedContext(fp, now);
  // A cached context may only prove a key live: refusals are decided on fresh data, since the key
  // may have been re-enabled or given a new expiry since it was cached.
  if (ctx && !isLocallyLive(ctx, now)) {
    evictContext(fp);
    ctx = undefined;
  }
  if (!ctx) {
    // Near the caller (a read replica); anything that would refuse is re-read on the primary.
    const found = await readKeyContext(env.DB, fp, (c) => isLocallyLive(c, now));
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
  if (k.expiresAt !== null && k.expiresAt <= now) throw unauthorized(k.kind === "session" ? "This session has expired; ask the app for a new one." : "This API key has expired.", "key_expired");
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
 * Applies a DO answer to a call sent at `sentAt`: a denial becomes the precise 401 (and evicts the
 * cache entry); a newer version reloads the context from D1. Returns the context to use for the
 * rest of the request, whose rules the answer confirmed as of `sentAt` (src/context/policy-freshness.ts).
 */
async function applyGate(env: Env, ctx: KeyContext, gate: GateResult, sentAt: number): Promise<KeyContext> {
  if (!gate.ok && gate.reason === "budget_busy") {
    const retryAfter = String(gate.retryAfterSeconds ?? 1);
    throw new ApiError(429, gate.message, { type: "rate_limit_error", code: "budget_busy", headers: { "retry-after": retryAfter } });
  }
  if (!gate.ok) {
    evictContext(ctx.key.fingerprint);
    throw unauthorized(gate.message, DENIAL_CODES[gate.reason] ?? "invalid_api_key");
  }
  if (gate.version === ctx.key.version) {
    noteConfirmed(ctx.key.id, gate.version, sentAt);
    return ctx;
  }
  evictContext(ctx.key.fingerprint);
  // The object's version is the floor: a replica that has not caught up on it is skipped.
  const fresh = await readKeyContext(env.DB, ctx.key.fingerprint, (c) => c.key.version >= gate.version);
  if (!fresh.found) throw unauthorized("This API key has been deleted.", "key_deleted");
  cacheContext(ctx.key.fingerprint, fresh.context);
  assertLocallyLive(fresh.context, Date.now());
  // At least the version the object had when asked: the rules as of `sentAt` (changes write D1 first).
  noteConfirmed(ctx.key.id, fresh.context.key.version, sentAt);
  return fresh.context;
}

/**
 * Liveness check through the key's DO (one round trip). `spending`: a key whose settled spend
 * reached a limit is refused too (what a spending route answers before judging the body).
 */
export async function checkKey(env: Env, ctx: KeyContext, opts: { spending?: boolean } = {}): Promise<KeyContext> {
  // The request's rate-limit answer (if counted: src/rate-limits/admission.ts) comes in beside the key's.
  const rate = awaitRate(ctx);
  // A live lease of this isolate vouches for the key's liveness (version and secret) until it expires.
  if (!opts.spending && leaseVouches(leaseName(ctx), ctx.key.version, ctx.key.fingerprint)) {
    await rate;
    return ctx;
  }
  const sentAt = Date.now();
  const [gate, rated] = await Promise.allSettled([keyStateStub(env, ctx.key.id).check(ctx.key.fingerprint, snapshotOf(ctx.key), undefined, opts), rate]);
  if (gate.status === "rejected") throw gate.reason;
  const live = await applyGate(env, ctx, gate.value, sentAt);
  // A refusal counted under a stale context is decided again with the fresh one (a raised limit).
  if (rated.status === "rejected") {
    if (live === ctx) throw rated.reason;
    await recheckRate(env, ctx, live);
  }
  return live;
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
export async function admitKey(env: Env, ctx: KeyContext, estimate: Pico, tokenBound = 0): Promise<Admission> {
  const amount = estimate > 0n ? estimate : 0n;
  // The request's rate-limit answer and its owner's budget (src/members/budget.ts) come in beside
  // the key's own admission (no round trip added; both answer at once when there is nothing to count).
  // A key with a token limit of its own also holds the request's token upper bound (`tokenBound`).
  const holding = tokenHoldNeeded(ctx, tokenBound) ? reserveTokens(env, ctx, tokenBound) : Promise.resolve({ hold: localHold(ctx, tokenBound), error: null });
  const [spend, rate, owner, tokens] = await Promise.allSettled([admitSpend(env, ctx, amount), awaitRate(ctx), admitMember(env, ctx, amount), holding]);
  const hold = tokens.status === "fulfilled" ? tokens.value.hold : null;
  const giveBack = async () => {
    if (hold) await releaseTokens(env, ctx, hold, 0);
  };
  // The key's own refusal (401) comes first.
  if (spend.status === "rejected") {
    if (owner.status === "fulfilled" && owner.value) await cancelMember(env, ctx, owner.value);
    await giveBack();
    throw spend.reason;
  }
  let memberReservation = owner.status === "fulfilled" ? owner.value : null;
  let memberRefusal: unknown = owner.status === "rejected" ? owner.reason : null;
  // A stale context (the key's object reported a newer version): the owner's limits may be new.
  const fresh = spend.value.context;
  if (memberRefusal === null && memberReservation === null && fresh !== ctx && fresh.member.limits) {
    memberReservation = await admitMember(env, fresh, amount).catch((err: unknown) => {
      memberRefusal = err;
      return null;
    });
  }
  if (memberRefusal !== null) {
    if (spend.value.reservationId) await cancelKeyReservation(env, ctx, spend.value.reservationId);
    await giveBack();
    throw memberRefusal;
  }
  const tokenRefusal = tokens.status === "fulfilled" ? tokens.value.error : null;
  if (tokenRefusal) {
    if (spend.value.reservationId) await cancelKeyReservation(env, ctx, spend.value.reservationId);
    if (memberReservation) await cancelMember(env, ctx, memberReservation);
    throw tokenRefusal;
  }
  const joined = { context: fresh, reservationId: withTokenHold(joinReservations(spend.value.reservationId, memberReservation), hold) };
  if (!hasPendingRate(ctx)) return joined;
  // The key's object found the context stale (an admin change): a rate refusal is decided again with the fresh one.
  const recheck =
    rate.status === "rejected" && spend.value.context !== ctx
      ? await recheckRate(env, ctx, spend.value.context).then(
          () => null,
          (err: unknown) => err,
        )
      : rate.status === "rejected"
        ? (rate.reason as unknown)
        : null;
  if (recheck !== null) {
    // Refused by a rate limit: the admissions made meanwhile give their reservations back.
    if (spend.value.reservationId) await cancelKeyReservation(env, ctx, spend.value.reservationId);
    if (memberReservation) await cancelMember(env, ctx, memberReservation);
    await giveBack();
    throw recheck;
  }
  return joined;
}

async function cancelKeyReservation(env: Env, ctx: KeyContext, reservationId: string): Promise<void> {
  await keyStateStub(env, ctx.key.id)
    .cancel(reservationId)
    .catch((err: unknown) => console.error("reservation release failed", err instanceof Error ? err.message : String(err)));
}

async function admitSpend(env: Env, ctx: KeyContext, estimate: Pico): Promise<Admission> {
  const amount = estimate > 0n ? estimate : 0n;
  let sentAt = Date.now();
  const r = await viaLease<GateResult>(
    leaseName(ctx),
    amount,
    { version: ctx.key.version, fingerprint: ctx.key.fingerprint, boundMs: admissionCallBoundMs(admissionWaitMs(env)) },
    async (close) => {
      sentAt = Date.now();
      const gate: GateResult = await keyStateStub(env, ctx.key.id).admit(ctx.key.fingerprint, snapshotOf(ctx.key), amount, undefined, { waitMs: admissionWaitMs(env), lease: true, close });
      return gate;
    },
    (g) => (g.ok && g.lease ? { lease: g.lease, version: g.version } : null),
  );
  // Steady state: admitted against this isolate's lease, no round trip.
  if ("reservationId" in r) return { context: ctx, reservationId: r.reservationId };
  const gate = r.gate;
  const context = await applyGate(env, ctx, gate, sentAt);
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
    // Counted against the rate limits from here; the answer is awaited with the key's own check.
    let ctx = startRate(c, await authenticateGatewayKey(c.env, presentedKey(c.req.raw.headers), Date.now(), { sessions: true }));
    c.get("probe")?.mark("key");
    if (!opts.spend) ctx = await checkKey(c.env, ctx);
    c.set("keyAuth", ctx);
    await next();
  };
}

// Lives with the other secret helpers in src/lib/crypto.ts (layers below admission need it too).
export { requireHashSecret };

/**
 * Rate limits, isolate side (docs/admission.md#rate-limits). Every request authenticated by a
 * gateway key on `/v1/*` and `/mcp` is counted against its organization's window and, when the
 * key has limits of its own, the key's (RateLimiter objects `rate:org:<id>`, `rate:key:<id>`;
 * src/durable-objects/rate-window.ts). Like spend, by lease (src/auth/leases.ts): an isolate
 * holding a live lease admits locally, so a busy key costs no call on the request path; the
 * lease is renewed in the background, and given up (with the tokens settled meanwhile) once the
 * isolate goes idle.
 *
 * `startRate` begins the count as soon as the key is known and does not wait for it: the answer
 * is awaited beside the key's own admission (`admitKey`, `checkKey`), so it adds no round trip
 * when neither is leased. Answers carry `x-ratelimit-*` for the tightest request limit
 * (`rateLimitHeaders`); a refusal is 429 `rate_limit_exceeded` with `Retry-After`.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, RateVerdict } from "../app-types";
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { ApiError } from "../errors/api-error";
import { keepCloses, leaseRoom, renewalDue, startRenewal, takeEndedCloses, viaLease } from "../auth/leases";
import { rateCounterStub } from "../durable-objects/rate-limiter";
import type { RateAnswer, RateView, WindowLimits } from "../durable-objects/rate-window";
import { organizationRateLimits, RATE_WINDOW_MS } from "./plans";

interface Subject {
  name: string;
  scope: "key" | "organization";
  limits: WindowLimits;
}

export type { RateVerdict };

/** The windows a request of this key counts in: its organization's, and the key's own when it has limits. */
export function rateSubjects(ctx: KeyContext): Subject[] {
  const o = ctx.organization;
  const org = organizationRateLimits(
    o.plan,
    { requestsPerMinute: o.requestsPerMinute ?? null, tokensPerMinute: o.tokensPerMinute ?? null },
    { requestsPerMinute: o.maxRequestsPerMinute ?? null, tokensPerMinute: o.maxTokensPerMinute ?? null },
  );
  const out: Subject[] = [{ name: `rate:org:${ctx.organization.id}`, scope: "organization", limits: { requests: org.requestsPerMinute, tokens: org.tokensPerMinute } }];
  const k = ctx.key;
  if (k.requestsPerMinute != null || k.tokensPerMinute != null) {
    out.push({ name: `rate:key:${k.id}`, scope: "key", limits: { requests: k.requestsPerMinute ?? null, tokens: k.tokensPerMinute ?? null } });
  }
  return out;
}

const MAX_ENTRIES = 10_000;
/** The last answer of each window's object (headers between calls are computed from it and the lease). */
const views = new Map<string, RateView>();
/** Tokens settled in this isolate, not yet reported to their window. */
const pendingTokens = new Map<string, number>();
/** When the pending idle flush of a window fires. */
const flushAt = new Map<string, number>();

function remember(name: string, view: RateView): void {
  if (views.size >= MAX_ENTRIES && !views.has(name)) views.clear();
  views.set(name, view);
}

function takeTokens(name: string): number {
  const t = pendingTokens.get(name) ?? 0;
  pendingTokens.delete(name);
  return t;
}

const giveTokens = (name: string, tokens: number): void => {
  if (tokens > 0) pendingTokens.set(name, (pendingTokens.get(name) ?? 0) + tokens);
};

/** What this isolate knows of a window now: the object's last answer, minus what its lease admitted since. */
function localView(name: string, now: number): RateView | null {
  const v = views.get(name);
  if (!v) return null;
  if (now >= v.resetAt) {
    const resetAt = now - (now % RATE_WINDOW_MS) + RATE_WINDOW_MS;
    return { ...v, requestsRemaining: v.requestLimit, tokensRemaining: v.tokenLimit, resetAt };
  }
  const room = leaseRoom(name, now);
  if (!room || room.slice === null || v.requestsRemaining === null) return v;
  return { ...v, requestsRemaining: v.requestsRemaining + Math.max(0, Number(room.slice - room.used)) };
}

type SubjectResult = { ok: true } | { ok: false; subject: Subject; answer: Extract<RateAnswer, { ok: false }> };

async function admitSubject(env: Env, s: Subject, cost: number): Promise<SubjectResult> {
  const r = await viaLease<RateAnswer>(
    s.name,
    BigInt(cost),
    {},
    async (close) => {
      const tokens = takeTokens(s.name);
      try {
        const answer: RateAnswer = await rateCounterStub(env, s.name).admitRate({ limits: s.limits, cost, lease: true, close, tokens });
        return answer;
      } catch (err) {
        giveTokens(s.name, tokens);
        throw err;
      }
    },
    (a) => (a.ok && a.lease ? { lease: a.lease } : null),
  );
  if ("reservationId" in r) return { ok: true };
  remember(s.name, r.gate.view);
  return r.gate.ok ? { ok: true } : { ok: false, subject: s, answer: r.gate };
}

/** The headers of the tightest request limit among these windows. */
function headersOf(subjects: readonly Subject[], now: number): Record<string, string> {
  let tightest: RateView | null = null;
  for (const s of subjects) {
    const v = localView(s.name, now);
    if (!v || v.requestLimit === null || v.requestsRemaining === null) continue;
    if (!tightest || v.requestsRemaining < tightest.requestsRemaining! || (v.requestsRemaining === tightest.requestsRemaining && v.requestLimit < tightest.requestLimit!)) tightest = v;
  }
  if (!tightest) return {};
  return {
    "x-ratelimit-limit": String(tightest.requestLimit),
    "x-ratelimit-remaining": String(tightest.requestsRemaining),
    "x-ratelimit-reset": String(Math.max(0, Math.ceil((tightest.resetAt - now) / 1000))),
  };
}

function refusal(r: Extract<SubjectResult, { ok: false }>, headers: Record<string, string>): ApiError {
  const who = r.subject.scope === "key" ? "this API key" : "this organization";
  const { reason, retryAfterSeconds } = r.answer;
  const what = reason === "tokens" ? `${r.subject.limits.tokens} tokens` : `${r.subject.limits.requests} requests`;
  return new ApiError(429, `Rate limit reached: ${who} allows ${what} per minute; retry in ${retryAfterSeconds} s.`, {
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    headers: { ...headers, "retry-after": String(retryAfterSeconds) },
  });
}

/**
 * Counts `cost` requests (a JSON-RPC batch: its messages) of this key. Never rejects: a window
 * object that cannot be reached does not refuse requests (logged; spend admission still applies).
 */
export async function admitRate(env: Env, ctx: KeyContext, cost = 1, waitUntil?: (p: Promise<unknown>) => void): Promise<RateVerdict> {
  const subjects = rateSubjects(ctx);
  const results = await Promise.all(
    subjects.map((s) =>
      admitSubject(env, s, cost).catch((err: unknown): SubjectResult => {
        console.error("rate limit check failed", err instanceof Error ? err.message : String(err));
        return { ok: true };
      }),
    ),
  );
  const headers = headersOf(subjects, Date.now());
  const refused = results.find((r): r is Extract<SubjectResult, { ok: false }> => !r.ok);
  if (waitUntil) waitUntil(upkeep(env, ctx, waitUntil));
  return { headers, error: refused ? refusal(refused, headers) : null };
}

/** Request-scoped: the count started for this request's key context (see `startRate`). */
const pending = new WeakMap<KeyContext, { verdict: Promise<RateVerdict>; cost: number; waitUntil: (p: Promise<unknown>) => void }>();

/**
 * Starts counting this request against its rate limits, without waiting: returns the request's
 * own copy of the context, which `admitKey`/`checkKey` (awaitRate) and the headers middleware
 * find the answer on. Background upkeep (lease renewal, idle flush) goes to the request's waitUntil.
 */
export function startRate(c: Context<AppEnv>, ctx: KeyContext, cost = 1): KeyContext {
  const waitUntil = (w: Promise<unknown>) => c.executionCtx.waitUntil(w);
  const p = admitRate(c.env, ctx, cost, waitUntil);
  c.set("rate", p);
  const scoped: KeyContext = { ...ctx };
  pending.set(scoped, { verdict: p, cost, waitUntil });
  return scoped;
}

/** Waits for this request's rate answer (if one was started) and throws its 429. */
export async function awaitRate(ctx: KeyContext): Promise<void> {
  const p = pending.get(ctx);
  if (!p) return;
  const v = await p.verdict;
  if (v.error) throw v.error;
}

/**
 * The key's object said the context was stale (an admin change: limits may have been raised):
 * a refusal counted with the old context is decided again with the fresh one. The request's
 * verdict object is updated in place, so its headers follow.
 */
export async function recheckRate(env: Env, stale: KeyContext, fresh: KeyContext): Promise<void> {
  const p = pending.get(stale);
  if (!p) return;
  const v = await p.verdict;
  if (!v.error) return;
  const again = await admitRate(env, fresh, p.cost, p.waitUntil);
  v.headers = again.headers;
  v.error = again.error;
  if (v.error) throw v.error;
}

/** Whether a rate answer is pending for this context (`admitKey` runs it beside its own call). */
export const hasPendingRate = (ctx: KeyContext): boolean => pending.has(ctx);

/** Middleware for `/v1/*`: the answer carries the `x-ratelimit-*` headers of the request's count. */
export const rateLimitHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const p = c.get("rate");
  if (!p) return;
  const { headers } = await p;
  if (Object.keys(headers).length === 0) return;
  try {
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  } catch {
    // Immutable headers (a fetched response passed through): copy the response once.
    const res = new Response(c.res.body, c.res);
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    c.res = res;
  }
};

/**
 * Tokens of a settled request (chat, embeddings): added to the windows with a token limit and
 * reported with the next call, or by an idle flush within a second. Returns that flush (for the
 * request's waitUntil), or null.
 */
export function countTokens(env: Env, ctx: KeyContext, tokens: number): Promise<void> | null {
  if (!(tokens > 0)) return null;
  const flushes: Promise<void>[] = [];
  for (const s of rateSubjects(ctx)) {
    if (s.limits.tokens === null) continue;
    giveTokens(s.name, tokens);
    flushes.push(flushLater(env, s, Date.now() + tokenReportMs(env)));
  }
  return flushes.length ? Promise.all(flushes).then(() => undefined) : null;
}

/** How long settled tokens may wait for a call to carry them. Follows SETTLE_BATCH_MS (default 1 s). */
function tokenReportMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).SETTLE_BATCH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 1_000;
}

/** After a request: renew leases near their end (with the tokens), and have each lease given up once it ends unused. */
async function upkeep(env: Env, ctx: KeyContext, waitUntil: (p: Promise<unknown>) => void): Promise<void> {
  for (const s of rateSubjects(ctx)) {
    if (renewalDue(s.name)) waitUntil(renew(env, s, waitUntil));
    const room = leaseRoom(s.name);
    if (room) waitUntil(flushLater(env, s, room.expiresAt + 20));
  }
}

async function renew(env: Env, s: Subject, waitUntil: (p: Promise<unknown>) => void): Promise<void> {
  const renewal = startRenewal(s.name);
  if (!renewal) return;
  const tokens = takeTokens(s.name);
  try {
    const answer = await rateCounterStub(env, s.name).admitRate({ limits: s.limits, cost: 0, lease: true, close: renewal.close, tokens });
    remember(s.name, answer.view);
    renewal.finish(answer.ok && answer.lease ? { lease: answer.lease } : null);
  } catch (err) {
    giveTokens(s.name, tokens);
    renewal.fail();
    console.error("rate lease renewal failed", err instanceof Error ? err.message : String(err));
    return;
  }
  const room = leaseRoom(s.name);
  if (room) waitUntil(flushLater(env, s, room.expiresAt + 20));
}

/**
 * At `at`, unless a later flush was armed meanwhile or a live lease (whose own flush is armed)
 * will carry them: sends the window the leases that ended and the tokens waiting.
 */
async function flushLater(env: Env, s: Subject, at: number): Promise<void> {
  if ((flushAt.get(s.name) ?? 0) >= at) return;
  if (flushAt.size >= MAX_ENTRIES) flushAt.clear();
  flushAt.set(s.name, at);
  await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
  if (flushAt.get(s.name) !== at) return;
  flushAt.delete(s.name);
  const close = takeEndedCloses(s.name);
  const tokens = takeTokens(s.name);
  if (close.length === 0 && tokens === 0) return;
  try {
    const answer = await rateCounterStub(env, s.name).admitRate({ limits: s.limits, cost: 0, close, tokens });
    remember(s.name, answer.view);
  } catch (err) {
    keepCloses(s.name, close);
    giveTokens(s.name, tokens);
    console.error("rate flush failed", err instanceof Error ? err.message : String(err));
  }
}

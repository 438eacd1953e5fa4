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
import { admissionCallBoundMs, keepCloses, leaseRoom, renewalDue, startRenewal, takeEndedCloses, viaLease, withinBound } from "../auth/leases";
import { rateCounterStub } from "../durable-objects/rate-limiter";
import type { RateAnswer, RateView, WindowLimits } from "../durable-objects/rate-window";
import { organizationRateLimits } from "./plans";

interface Subject {
  name: string;
  scope: "key" | "organization";
  limits: WindowLimits;
}

export type { RateVerdict };

/**
 * The subjects built per key record, with the organization record they were built for: a request
 * reads them four to five times, and a context's records are replaced, never changed, when its key
 * or organization changes (a request's own context is a copy holding the same records).
 */
const subjectsOf = new WeakMap<KeyContext["key"], { organization: KeyContext["organization"]; subjects: readonly Subject[] }>();

/** The windows a request of this key counts in: its organization's, and the key's own when it has limits. */
export function rateSubjects(ctx: KeyContext): readonly Subject[] {
  const hit = subjectsOf.get(ctx.key);
  if (hit && hit.organization === ctx.organization) return hit.subjects;
  const subjects = buildSubjects(ctx);
  subjectsOf.set(ctx.key, { organization: ctx.organization, subjects });
  return subjects;
}

function buildSubjects(ctx: KeyContext): Subject[] {
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

/**
 * What this isolate knows of a window now: the object's last answer, minus what its lease admitted
 * since. Past the answer's `resetAt` the window (which slides) may have more room than it said: the
 * isolate learns how much with its next call, and says the last figure until then.
 */
function localView(name: string, now: number): RateView | null {
  const v = views.get(name);
  if (!v) return null;
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
  if (waitUntil) upkeep(env, ctx, waitUntil);
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
 * reported with the next call, or by an idle flush within a second; a window that held the
 * request's bound (`hold`) gets them at once, with the bound given back. Returns that work (for
 * the request's waitUntil), or null.
 */
export function countTokens(env: Env, ctx: KeyContext, tokens: number, hold: TokenHold | null = null): Promise<void> | null {
  const flushes: Promise<void>[] = [];
  if (hold) flushes.push(releaseTokens(env, ctx, hold, tokens));
  if (!(tokens > 0)) return flushes.length ? flushes[0]! : null;
  for (const s of rateSubjects(ctx)) {
    if (s.limits.tokens === null || (hold && hold.start !== -1 && s.name === hold.name)) continue;
    giveTokens(s.name, tokens);
    const at = tokenFlushAt(env, Date.now());
    if (!flushArmed(s.name, at)) flushes.push(flushLater(env, s, at));
  }
  return flushes.length ? Promise.all(flushes).then(() => undefined) : null;
}

/**
 * When settled tokens are flushed: SETTLE_BATCH_MS from now, rounded down to a 100 ms grid. The
 * latest flush armed for a window wins (`flushLater`), so without the grid every request of a busy
 * window armed a timer of its own (and its waitUntil) to supersede the last; on the grid the
 * requests of one tenth of a second share one, and none waits longer than before.
 */
const TOKEN_FLUSH_GRID_MS = 100;
function tokenFlushAt(env: Env, now: number): number {
  const at = now + tokenReportMs(env);
  return at - (at % TOKEN_FLUSH_GRID_MS);
}

/** How long settled tokens may wait for a call to carry them. Follows SETTLE_BATCH_MS (default 1 s). */
function tokenReportMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).SETTLE_BATCH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 1_000;
}

/**
 * After a request: renew leases near their end (with the tokens), and have each lease given up
 * once it ends unused. Synchronous, and a flush already armed for as late is not asked again: most
 * requests of a busy window hand nothing to waitUntil.
 */
function upkeep(env: Env, ctx: KeyContext, waitUntil: (p: Promise<unknown>) => void): void {
  for (const s of rateSubjects(ctx)) {
    if (renewalDue(s.name)) waitUntil(renew(env, s, waitUntil));
    const room = leaseRoom(s.name);
    if (room && !flushArmed(s.name, room.expiresAt + 20)) waitUntil(flushLater(env, s, room.expiresAt + 20));
  }
}

/** A flush of this window is armed for `at` or later (`flushLater` would return at once). */
const flushArmed = (name: string, at: number): boolean => (flushAt.get(name) ?? 0) >= at;

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

// ---------- token upper bounds held per request (a key's own tokens-per-minute limit) ----------

/** A request's token upper bound held in a key window until it settles. */
export interface TokenHold {
  name: string;
  /** The window it was held in (a later window has forgotten it). */
  start: number;
  tokens: number;
}

const HOLD_SEP = "|tokens|";

/**
 * The windows whose token limit is held per request: a key's own `tokensPerMinute` (small, set to
 * stop a burst). The organization's window (the plan's millions) keeps leases and counts tokens
 * as they settle.
 */
const holdingSubjects = (ctx: KeyContext): readonly Subject[] => rateSubjects(ctx).filter((s) => s.scope === "key" && s.limits.tokens !== null);

/**
 * No hold while the window's tokens left (its last answer) minus the bounds this isolate admitted
 * without one are worth this many requests like this one: as with leases, a key far from its limit
 * costs no call on the request path; near it (or before the isolate knows the window) every
 * request holds its bound.
 */
const HOLD_FREE_REQUESTS = 32;
/** Bounds this isolate admitted without a hold, per window, until their requests settle. */
const unheld = new Map<string, number>();

/**
 * Whether this request must hold its token bound in the key's window; when not, its bound is
 * counted in this isolate until it settles (`withTokenHold` marks it, `countTokens` ends it).
 */
export function tokenHoldNeeded(ctx: KeyContext, bound: number, now = Date.now()): boolean {
  const s = holdingSubjects(ctx)[0];
  if (!s || !(bound > 0)) return false;
  const v = localView(s.name, now);
  const open = unheld.get(s.name) ?? 0;
  if (!v || v.tokensRemaining === null || v.tokensRemaining - open < HOLD_FREE_REQUESTS * bound) return true;
  if (unheld.size >= MAX_ENTRIES && !unheld.has(s.name)) unheld.clear();
  unheld.set(s.name, open + bound);
  return false;
}

/** A bound admitted without a hold: counted locally, under the window's name, with start -1. */
export const localHold = (ctx: KeyContext, bound: number): TokenHold | null => {
  const s = holdingSubjects(ctx)[0];
  return s && bound > 0 ? { name: s.name, start: -1, tokens: bound } : null;
};

/** Adds a token hold to a reservation id (settlement splits it off with `splitTokenHold`). */
export function withTokenHold(reservationId: string | null, hold: TokenHold | null): string | null {
  if (!hold) return reservationId;
  return `${reservationId ?? ""}${HOLD_SEP}${hold.name}@${hold.start}@${hold.tokens}`;
}

export function splitTokenHold(id: string | null): { rest: string | null; hold: TokenHold | null } {
  if (id === null) return { rest: null, hold: null };
  const cut = id.indexOf(HOLD_SEP);
  if (cut < 0) return { rest: id, hold: null };
  const [name, start, tokens] = id.slice(cut + HOLD_SEP.length).split("@");
  const hold = name && Number.isFinite(Number(start)) && Number.isFinite(Number(tokens)) ? { name, start: Number(start), tokens: Number(tokens) } : null;
  return { rest: id.slice(0, cut) || null, hold };
}

/**
 * Holds `bound` tokens (a true upper bound of what the request can bill) in the key's window:
 * admitted while the window's settled and held tokens are below its limit, so a burst stops at the
 * limit plus one request. Like the request count, a window object that cannot be reached admits
 * (logged). Returns the hold, or the 429 to answer.
 */
export async function reserveTokens(env: Env, ctx: KeyContext, bound: number): Promise<{ hold: TokenHold | null; error: ApiError | null }> {
  const s = holdingSubjects(ctx)[0];
  if (!s || !(bound > 0)) return { hold: null, error: null };
  const tokens = takeTokens(s.name);
  try {
    const ask = async (): Promise<RateAnswer> => rateCounterStub(env, s.name).admitRate({ limits: s.limits, cost: 0, tokens, reserveTokens: Math.ceil(bound) });
    const answer = await withinBound(ask(), admissionCallBoundMs(0));
    remember(s.name, answer.view);
    if (!answer.ok) return { hold: null, error: refusal({ ok: false, subject: s, answer }, headersOf(rateSubjects(ctx), Date.now())) };
    return { hold: answer.held ? { name: s.name, ...answer.held } : null, error: null };
  } catch (err) {
    giveTokens(s.name, tokens);
    console.error("token hold failed", err instanceof Error ? err.message : String(err));
    return { hold: null, error: null };
  }
}

/** Gives a hold back with the request's real tokens (0 for a request refused after admission). */
export async function releaseTokens(env: Env, ctx: KeyContext, hold: TokenHold, tokens: number): Promise<void> {
  if (hold.start === -1) {
    // Admitted without a hold (far from the limit): the tokens go with the next report.
    unheld.set(hold.name, Math.max(0, (unheld.get(hold.name) ?? 0) - hold.tokens));
    return;
  }
  const s = holdingSubjects(ctx).find((x) => x.name === hold.name);
  const limits = s?.limits ?? { requests: null, tokens: null };
  try {
    const answer = await rateCounterStub(env, hold.name).admitRate({ limits, cost: 0, tokens: Math.max(0, Math.floor(tokens)), releaseTokens: { start: hold.start, tokens: hold.tokens } });
    remember(hold.name, answer.view);
  } catch (err) {
    // The hold ends with its window (at most a minute); the tokens go with the next report.
    giveTokens(hold.name, tokens);
    console.error("token release failed", err instanceof Error ? err.message : String(err));
  }
}

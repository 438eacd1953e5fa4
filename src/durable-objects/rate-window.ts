/**
 * Rate counters, object side (docs/admission.md#rate-limits): the window of one subject (a key,
 * an organization, kept in the RateLimiter object named `rate:key:<id>` / `rate:org:<id>`), with
 * leases like the budget objects'. A lease gives one isolate a slice of the window's requests for
 * at most LEASE_TTL_MS (never past the window's end); the isolate admits requests locally against
 * it and reports how many it admitted when it gives the lease up. The object counts a lease's
 * whole slice as used until then, so the request limit is never exceeded. Tokens are counted when
 * requests settle (isolates report them with their next call); a window whose tokens are spent
 * refuses further requests, and near the token limit no lease is granted. A key's own token limit
 * is held per request: each request reserves its token upper bound at admission (`reserveTokens`),
 * admitted only while settled plus reserved tokens are below the limit, so a burst stops at the
 * limit plus one request; its settlement releases the bound (`releaseTokens`) with its real tokens.
 */
import { LEASE_TTL_MS, type LeaseClose, type LeaseGrant } from "./lease-book";
import { RATE_WINDOW_MS } from "../rate-limits/plans";

/** A lease only while what is left of the window is worth this many requests; it carves this fraction. */
const LEASE_MIN_REQUESTS = 32;
const LEASE_SLICE_DIVISOR = 8;
/** No lease once this share of the token limit is spent: each request asks, so refusals come on time. */
const TOKEN_LEASE_SHARE = 7 / 8;
/** A lease shorter than this is not worth granting (end of the window). */
const MIN_LEASE_MS = 100;

export interface WindowLimits {
  requests: number | null;
  tokens: number | null;
}

export interface RateAsk {
  limits: WindowLimits;
  /** Requests to admit now (a JSON-RPC batch counts each message); 0: report (and renew) only. */
  cost: number;
  /** Grant a lease when the window allows one (the request is admitted under it). */
  lease?: boolean;
  /** Leases the isolate gave up, with the requests it admitted under them. */
  close?: readonly LeaseClose[];
  /** Tokens of requests settled since the isolate's last report. */
  tokens?: number;
  /** Hold this request's token upper bound in the window (no lease then); refused at the token limit. */
  reserveTokens?: number;
  /** Bounds held by settled requests, given back; `start` is the window they were held in. */
  releaseTokens?: { start: number; tokens: number };
}

/** What the headers say: the window's limit, what is left of it (slices handed out count as used), its end. */
export interface RateView {
  requestLimit: number | null;
  requestsRemaining: number | null;
  tokenLimit: number | null;
  tokensRemaining: number | null;
  resetAt: number;
}

export type RateAnswer =
  | { ok: true; view: RateView; lease?: LeaseGrant; held?: { start: number; tokens: number } }
  | { ok: false; view: RateView; reason: "requests" | "tokens"; retryAfterSeconds: number };

export interface WindowState {
  start: number;
  requests: number;
  tokens: number;
  /** Open leases of this window: their slices. */
  leases: Record<string, number | null>;
  next: number;
  /** Token upper bounds held by admitted requests not settled yet (absent in windows stored before). */
  reservedTokens?: number;
}

export const emptyWindow = (start: number): WindowState => ({ start, requests: 0, tokens: 0, leases: {}, next: 0, reservedTokens: 0 });

const windowStart = (now: number): number => now - (now % RATE_WINDOW_MS);

/** Applies one call to the window (mutates `w`, which the object then stores). */
export function applyRate(w: WindowState, ask: RateAsk, now: number): { window: WindowState; answer: RateAnswer } {
  const start = windowStart(now);
  // A new window: counts start over, leases of the last one (all ended with it) are forgotten.
  const win = w.start === start ? w : emptyWindow(start);
  for (const c of ask.close ?? []) {
    if (!(c.leaseId in win.leases)) continue;
    const admitted = Number(c.admittedTotal);
    if (Number.isFinite(admitted) && admitted > 0) win.requests += admitted;
    delete win.leases[c.leaseId];
  }
  if (ask.tokens && ask.tokens > 0) win.tokens += Math.floor(ask.tokens);
  // Holds of an earlier window ended with it.
  if (ask.releaseTokens && ask.releaseTokens.start === win.start) win.reservedTokens = Math.max(0, (win.reservedTokens ?? 0) - Math.floor(ask.releaseTokens.tokens));
  const { requests: requestLimit, tokens: tokenLimit } = ask.limits;
  const end = start + RATE_WINDOW_MS;
  const held = Object.values(win.leases).reduce<number>((a, s) => a + (s ?? 0), 0);
  const view = (): RateView => ({
    requestLimit,
    requestsRemaining: requestLimit === null ? null : Math.max(0, requestLimit - win.requests - Object.values(win.leases).reduce<number>((a, s) => a + (s ?? 0), 0)),
    tokenLimit,
    tokensRemaining: tokenLimit === null ? null : Math.max(0, tokenLimit - win.tokens),
    resetAt: end,
  });
  const untilReset = Math.max(1, Math.ceil((end - now) / 1000));
  const cost = Math.max(0, Math.floor(ask.cost));
  const reserve = Math.max(0, Math.floor(ask.reserveTokens ?? 0));
  if (cost === 0 && !ask.lease && reserve === 0) return { window: win, answer: { ok: true, view: view() } };
  if (tokenLimit !== null && win.tokens + (reserve > 0 ? (win.reservedTokens ?? 0) : 0) >= tokenLimit) {
    return { window: win, answer: { ok: false, view: view(), reason: "tokens", retryAfterSeconds: untilReset } };
  }
  if (requestLimit !== null && win.requests + held + cost > requestLimit) {
    // Refused on what was admitted: wait for the window. Refused only because of slices other
    // isolates hold: those end within a lease's life, and hand back what they did not use.
    const retryAfterSeconds = win.requests + cost > requestLimit ? untilReset : 1;
    return { window: win, answer: { ok: false, view: view(), reason: "requests", retryAfterSeconds } };
  }
  if (reserve > 0) {
    win.requests += cost;
    win.reservedTokens = (win.reservedTokens ?? 0) + reserve;
    return { window: win, answer: { ok: true, view: view(), held: { start: win.start, tokens: reserve } } };
  }
  const slice = ask.lease ? leaseSlice(win, ask.limits, held, cost, end - now) : "none";
  if (slice === "none") {
    win.requests += cost;
    return { window: win, answer: { ok: true, view: view() } };
  }
  const leaseId = `${now.toString(36)}.${(win.next++).toString(36)}`;
  win.leases[leaseId] = slice;
  const grant: LeaseGrant = { leaseId, slice: slice === null ? null : String(slice), ttlMs: Math.min(LEASE_TTL_MS, end - now) };
  return { window: win, answer: { ok: true, view: view(), lease: grant } };
}

/** The requests a lease may carve (null: no request limit), or "none" (per-request admission). */
function leaseSlice(win: WindowState, limits: WindowLimits, held: number, cost: number, leftMs: number): number | null | "none" {
  if (leftMs < MIN_LEASE_MS) return "none";
  if (limits.tokens !== null && win.tokens >= limits.tokens * TOKEN_LEASE_SHARE) return "none";
  if (limits.requests === null) return null;
  const remaining = limits.requests - win.requests - held;
  if (remaining < LEASE_MIN_REQUESTS * Math.max(1, cost)) return "none";
  return Math.max(cost, Math.floor(remaining / LEASE_SLICE_DIVISOR));
}

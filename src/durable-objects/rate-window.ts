/**
 * Rate counters, object side (docs/admission.md#rate-limits): the window of one subject (a key,
 * an organization, kept in the RateLimiter object named `rate:key:<id>` / `rate:org:<id>`), with
 * leases like the budget objects'. A lease gives one isolate a slice of the window's requests for
 * at most LEASE_TTL_MS; the isolate admits requests locally against it and reports how many it
 * admitted when it gives the lease up. The object counts a lease's whole slice as used until
 * then, so the request limit is never exceeded. Tokens are counted when requests settle (isolates
 * report them with their next call); a window whose tokens are spent refuses further requests,
 * and near the token limit no lease is granted. A key's own token limit is held per request: each
 * request reserves its token upper bound at admission (`reserveTokens`), admitted only while
 * settled plus reserved tokens are below the limit, so a burst stops at the limit plus one
 * request; its settlement releases the bound (`releaseTokens`) with its real tokens.
 *
 * The window slides: requests and tokens are counted per second (`Slots`), and a call is decided
 * on the seconds of the last minute, so no interval of a minute ever holds more than the limit.
 * (Fixed minutes let a client spend one minute's limit in its last second and the next minute's
 * in the following one: twice the limit within two seconds.) A lease's slice counts in the second
 * the lease ends, the latest its requests can come. The cost: a request counts for up to a second
 * longer than a minute, and the object keeps 62 numbers per counter; nothing per request. Token
 * holds still end with the minute they were made in.
 */
import { LEASE_TTL_MS, type LeaseClose, type LeaseGrant } from "./lease-book";
import { RATE_WINDOW_MS } from "../rate-limits/plans";

/** A lease only while what is left of the window is worth this many requests; it carves this fraction. */
const LEASE_MIN_REQUESTS = 32;
const LEASE_SLICE_DIVISOR = 8;
/** No lease once this share of the token limit is spent: each request asks, so refusals come on time. */
const TOKEN_LEASE_SHARE = 7 / 8;

/** The sliding window's resolution. */
const SLOT_MS = 1_000;
/** Seconds kept: the minute, the second it starts in, and the next second (a lease granted now ends there). */
const SLOTS = RATE_WINDOW_MS / SLOT_MS + 2;

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
  /** Bounds held by settled requests, given back; `start` is the minute they were held in. */
  releaseTokens?: { start: number; tokens: number };
}

/** What the headers say: the limit, what is left of it over the last minute (slices handed out count as used), when room grows. */
export interface RateView {
  requestLimit: number | null;
  requestsRemaining: number | null;
  tokenLimit: number | null;
  tokensRemaining: number | null;
  /** When the oldest requests counted leave the window (what is left grows then). */
  resetAt: number;
}

export type RateAnswer =
  | { ok: true; view: RateView; lease?: LeaseGrant; held?: { start: number; tokens: number } }
  | { ok: false; view: RateView; reason: "requests" | "tokens"; retryAfterSeconds: number };

/** Requests and tokens per second, in rings of SLOTS; `at` is the newest second kept. */
interface Slots {
  at: number;
  requests: number[];
  tokens: number[];
}

export interface WindowState {
  /** The minute that open leases and token holds belong to. */
  start: number;
  /** Open leases granted in this minute: their slices. */
  leases: Record<string, number | null>;
  /** Open leases granted in the minute before (they end within a second of it). */
  previousLeases?: Record<string, number | null>;
  next: number;
  /** Token upper bounds held by admitted requests not settled yet (absent in windows stored before). */
  reservedTokens?: number;
  /** The counts of the last minute, per second (absent in windows stored before the window slid). */
  slots?: Slots;
}

export const emptyWindow = (start: number): WindowState => ({ start, leases: {}, next: 0, reservedTokens: 0 });

const minuteOf = (now: number): number => now - (now % RATE_WINDOW_MS);
const slotOf = (t: number): number => Math.floor(t / SLOT_MS);
/** The first second counted at `now`: the one a minute ago falls in. */
const firstSlot = (now: number): number => slotOf(now - RATE_WINDOW_MS);

/** Moves the rings to `now`: seconds that left them are emptied; the next second is kept too. */
function advance(win: WindowState, now: number): Slots {
  const newest = slotOf(now) + 1;
  const s = win.slots ?? { at: newest, requests: new Array<number>(SLOTS).fill(0), tokens: new Array<number>(SLOTS).fill(0) };
  win.slots = s;
  if (newest <= s.at) return s;
  if (newest - s.at >= SLOTS) {
    s.requests.fill(0);
    s.tokens.fill(0);
  } else {
    for (let j = s.at + 1; j <= newest; j++) {
      s.requests[j % SLOTS] = 0;
      s.tokens[j % SLOTS] = 0;
    }
  }
  s.at = newest;
  return s;
}

/** Adds `n` to the second `t` falls in, if the ring still holds it. */
function addAt(ring: number[], s: Slots, t: number, n: number): void {
  const j = slotOf(t);
  if (j > s.at || j <= s.at - SLOTS) return;
  ring[j % SLOTS] = Math.max(0, ring[j % SLOTS]! + n);
}

/** What the last minute holds at `now` (with slices of leases that end in the next second). */
function lastMinute(ring: number[], s: Slots, now: number): number {
  let sum = 0;
  for (let j = firstSlot(now); j <= s.at; j++) sum += ring[j % SLOTS]!;
  return sum;
}

/** When `used` (what the last minute holds) has fallen enough that `extra` more fits under `limit`: oldest seconds leave first. */
function roomAt(ring: number[], s: Slots, now: number, used: number, extra: number, limit: number): number {
  let left = used;
  for (let j = firstSlot(now); j <= s.at; j++) {
    left -= ring[j % SLOTS]!;
    // Second j leaves the window once a minute has passed since its end.
    if (left + extra <= limit) return (j + 1) * SLOT_MS + RATE_WINDOW_MS;
  }
  return now + RATE_WINDOW_MS;
}

const secondsUntil = (at: number, now: number): number => Math.max(1, Math.ceil((at - now) / 1000));

/** The end of a lease from its id (`<grant time, base 36>.<n>`): the second its slice counts in. */
const leaseEnd = (leaseId: string): number => parseInt(leaseId, 36) + LEASE_TTL_MS;

const heldBy = (leases: Record<string, number | null> | undefined): number => (leases ? Object.values(leases).reduce<number>((a, n) => a + (n ?? 0), 0) : 0);

/** A lease's close: what it admitted replaces its slice, in the second the lease ends. */
function applyClose(win: WindowState, s: Slots, c: LeaseClose): void {
  const book = c.leaseId in win.leases ? win.leases : win.previousLeases && c.leaseId in win.previousLeases ? win.previousLeases : null;
  if (!book) return;
  const n = Number(c.admittedTotal);
  const admitted = Number.isFinite(n) && n > 0 ? n : 0;
  const slice = book[c.leaseId];
  // No request limit when it was granted (null slice): its requests count as reported.
  addAt(s.requests, s, leaseEnd(c.leaseId), admitted - (slice ?? 0));
  delete book[c.leaseId];
}

/** Applies one call to the window (mutates `w`, which the object then stores). */
export function applyRate(w: WindowState, ask: RateAsk, now: number): { window: WindowState; answer: RateAnswer } {
  const start = minuteOf(now);
  // A new minute: token holds of the last one end; its open leases (ending within a second) still close.
  const win = w.start === start ? w : { ...emptyWindow(start), previousLeases: w.start === start - RATE_WINDOW_MS ? w.leases : {}, ...(w.slots ? { slots: w.slots } : {}) };
  const s = advance(win, now);
  for (const c of ask.close ?? []) applyClose(win, s, c);
  if (ask.tokens && ask.tokens > 0) addAt(s.tokens, s, now, Math.floor(ask.tokens));
  // Holds of an earlier minute ended with it.
  if (ask.releaseTokens && ask.releaseTokens.start === win.start) win.reservedTokens = Math.max(0, (win.reservedTokens ?? 0) - Math.floor(ask.releaseTokens.tokens));
  const { requests: requestLimit, tokens: tokenLimit } = ask.limits;
  const requests = lastMinute(s.requests, s, now);
  const tokens = lastMinute(s.tokens, s, now);
  const view = (): RateView => {
    const used = lastMinute(s.requests, s, now);
    return {
      requestLimit,
      requestsRemaining: requestLimit === null ? null : Math.max(0, requestLimit - used),
      tokenLimit,
      tokensRemaining: tokenLimit === null ? null : Math.max(0, tokenLimit - tokens),
      resetAt: used === 0 ? now : Math.min(now + RATE_WINDOW_MS, roomAt(s.requests, s, now, used, 0, used - 1)),
    };
  };
  const cost = Math.max(0, Math.floor(ask.cost));
  const reserve = Math.max(0, Math.floor(ask.reserveTokens ?? 0));
  if (cost === 0 && !ask.lease && reserve === 0) return { window: win, answer: { ok: true, view: view() } };
  const tokensUsed = tokens + (reserve > 0 ? (win.reservedTokens ?? 0) : 0);
  if (tokenLimit !== null && tokensUsed >= tokenLimit) {
    const retryAfterSeconds = secondsUntil(roomAt(s.tokens, s, now, tokensUsed, 1, tokenLimit), now);
    return { window: win, answer: { ok: false, view: view(), reason: "tokens", retryAfterSeconds } };
  }
  if (requestLimit !== null && requests + cost > requestLimit) {
    // Refused only because of slices other isolates hold: those end within a lease's life, and
    // hand back what they did not use. Else refused on what was admitted: wait for the oldest to leave.
    const held = heldBy(win.leases) + heldBy(win.previousLeases);
    const retryAfterSeconds = requests - held + cost <= requestLimit ? 1 : secondsUntil(roomAt(s.requests, s, now, requests, cost, requestLimit), now);
    return { window: win, answer: { ok: false, view: view(), reason: "requests", retryAfterSeconds } };
  }
  if (reserve > 0) {
    addAt(s.requests, s, now, cost);
    win.reservedTokens = (win.reservedTokens ?? 0) + reserve;
    return { window: win, answer: { ok: true, view: view(), held: { start: win.start, tokens: reserve } } };
  }
  const slice = ask.lease ? leaseSlice(ask.limits, requests, tokens, cost) : "none";
  if (slice === "none") {
    addAt(s.requests, s, now, cost);
    return { window: win, answer: { ok: true, view: view() } };
  }
  const leaseId = `${now.toString(36)}.${(win.next++).toString(36)}`;
  win.leases[leaseId] = slice;
  if (slice !== null) addAt(s.requests, s, leaseEnd(leaseId), slice);
  const grant: LeaseGrant = { leaseId, slice: slice === null ? null : String(slice), ttlMs: LEASE_TTL_MS };
  return { window: win, answer: { ok: true, view: view(), lease: grant } };
}

/** The requests a lease may carve (null: no request limit), or "none" (per-request admission). */
function leaseSlice(limits: WindowLimits, requests: number, tokens: number, cost: number): number | null | "none" {
  if (limits.tokens !== null && tokens >= limits.tokens * TOKEN_LEASE_SHARE) return "none";
  if (limits.requests === null) return null;
  const remaining = limits.requests - requests;
  if (remaining < LEASE_MIN_REQUESTS * Math.max(1, cost)) return "none";
  return Math.max(cost, Math.floor(remaining / LEASE_SLICE_DIVISOR));
}

import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { applyRate, emptyWindow, type RateAnswer, type RateAsk, type WindowState } from "./rate-window";
import { fromFixedWindow, hitWindow, type AttemptResult, type AttemptWindow } from "./attempt-window";
import { countDoCall, simulatedLatency } from "./debug-latency";

export type RateLimitResult = AttemptResult;

interface Backoff {
  failures: number;
  last: number;
  until: number;
}

/**
 * Counters of one subject each (e.g. `signin:ip:<ip>`, `invite:<org>:<email>`): attempts in a
 * sliding window (attempt-window.ts), a backoff, and a key's or organization's rate window.
 * All live in storage so they survive eviction.
 */
export class RateLimiter extends DurableObject<Env> {
  /** Counts `cost` calls (a batch counts each of its calls) in the window sliding back from `now`; a refused call counts nothing. */
  async hit(limit: number, windowMs: number, now = Date.now(), cost = 1): Promise<RateLimitResult> {
    const stored = await this.ctx.storage.get<AttemptWindow | { windowStart: number; count: number }>("w");
    const { window, result } = hitWindow(stored && "count" in stored ? fromFixedWindow(stored, windowMs) : stored, limit, windowMs, now, cost);
    await this.ctx.storage.put("w", window);
    return result;
  }

  async reset(): Promise<void> {
    await this.ctx.storage.delete(["w", "b"]);
  }

  /** Backoff state (sign-in per client IP + account): until when this subject must wait. */
  async blockedUntil(now = Date.now()): Promise<number> {
    const b = await this.ctx.storage.get<Backoff>("b");
    return b && b.until > now ? b.until : 0;
  }

  /**
   * Records one failure: after `free` failures each further one doubles the wait, from `baseMs` up
   * to `maxMs`. The count starts over after `maxMs` without failures. Returns the new wait end.
   */
  async recordFailure(free: number, baseMs: number, maxMs: number, now = Date.now()): Promise<number> {
    const prev = await this.ctx.storage.get<Backoff>("b");
    const failures = prev && now - prev.last < maxMs ? prev.failures + 1 : 1;
    const until = failures > free ? now + Math.min(maxMs, baseMs * 2 ** (failures - free - 1)) : 0;
    await this.ctx.storage.put("b", { failures, last: now, until } satisfies Backoff);
    return until;
  }

  /**
   * Request and token rate limits of one key or organization, with leases (rate-window.ts,
   * docs/admission.md#rate-limits). The window is kept in storage, so an evicted object keeps it.
   */
  async admitRate(ask: RateAsk, now = Date.now()): Promise<RateAnswer> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    const stored = this.ctx.storage.kv.get<WindowState>("rate") ?? emptyWindow(0);
    const { window, answer } = applyRate(stored, ask, now);
    this.ctx.storage.kv.put("rate", window);
    return answer;
  }

  /** Health check (GET /): a real round trip that also touches this object's storage. */
  async ping(): Promise<"pong"> {
    await this.ctx.storage.get("w");
    return "pong";
  }
}

/** Counts one hit for `subject`; callers decide what to do when `allowed` is false. */
export function rateLimit(env: Env, subject: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
  return limiter(env, subject).hit(limit, windowMs, Date.now(), cost);
}

const limiter = (env: Env, subject: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));

/** The rate counters of `subject` (`rate:key:<id>`, `rate:org:<id>`); counted like the budget objects' calls. */
export function rateCounterStub(env: Env, subject: string) {
  countDoCall();
  return limiter(env, subject);
}

/** Epoch ms until which `subject` is backing off (0 when it may try now). */
export const backoffUntil = (env: Env, subject: string): Promise<number> => limiter(env, subject).blockedUntil();

/** Counts a failure for `subject` (see `RateLimiter.recordFailure`). */
export const recordFailure = (env: Env, subject: string, free: number, baseMs: number, maxMs: number): Promise<number> =>
  limiter(env, subject).recordFailure(free, baseMs, maxMs);

/** Forgets `subject`'s counters (a successful sign-in). */
export const resetLimits = (env: Env, subject: string): Promise<void> => limiter(env, subject).reset();

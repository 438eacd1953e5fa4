import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { applyRate, emptyWindow, type RateAnswer, type RateAsk, type WindowState } from "./rate-window";
import { countDoCall, simulatedLatency } from "./debug-latency";

export interface RateLimitResult {
  allowed: boolean;
  remaining: number;
  /** Epoch ms when the current window ends. */
  resetAt: number;
}

interface Backoff {
  failures: number;
  last: number;
  until: number;
}

/**
 * Fixed-window counter, one object per subject (e.g. `signin:<email>`, `mcp:<keyId>`).
 * Windows live in memory and storage so they survive eviction.
 */
export class RateLimiter extends DurableObject<Env> {
  /** Counts `cost` calls (a JSON-RPC batch counts each message) in the current window. */
  async hit(limit: number, windowMs: number, now = Date.now(), cost = 1): Promise<RateLimitResult> {
    const windowStart = now - (now % windowMs);
    const stored = await this.ctx.storage.get<{ windowStart: number; count: number }>("w");
    const units = Math.max(1, Math.floor(cost));
    const count = stored && stored.windowStart === windowStart ? stored.count + units : units;
    await this.ctx.storage.put("w", { windowStart, count });
    return { allowed: count <= limit, remaining: Math.max(0, limit - count), resetAt: windowStart + windowMs };
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

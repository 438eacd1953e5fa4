import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export interface RateLimitResult {
  allowed: boolean;
  remaining: number;
  /** Epoch ms when the current window ends. */
  resetAt: number;
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
    await this.ctx.storage.delete("w");
  }

  /** Health check (GET /): a real round trip that also touches this object's storage. */
  async ping(): Promise<"pong"> {
    await this.ctx.storage.get("w");
    return "pong";
  }
}

/** Counts one hit for `subject`; callers decide what to do when `allowed` is false. */
export function rateLimit(env: Env, subject: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject)).hit(limit, windowMs, Date.now(), cost);
}

import { describe, expect, it } from "vitest";
import { classifyHttp, finalError, retryAfterSeconds } from "./failover";

describe("a provider's Retry-After", () => {
  it("reads delta-seconds and HTTP dates, rounds up, bounds it, and ignores what it cannot read", () => {
    const now = Date.parse("2026-11-27T12:00:00Z");
    expect(retryAfterSeconds("7", now)).toBe(7);
    expect(retryAfterSeconds(" 0.2 ", now)).toBe(1);
    expect(retryAfterSeconds("Fri, 27 Nov 2026 12:00:30 GMT", now)).toBe(30);
    expect(retryAfterSeconds("Fri, 27 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterSeconds("86400", now)).toBe(3600);
    expect(retryAfterSeconds("soon", now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });

  it("a request that ends on a provider's 429 answers 429 with Retry-After: the provider's, else one second", () => {
    const hinted = finalError(classifyHttp(429, "credits", "slow down", "rate_limit", 12), 2, "groq");
    expect(hinted.status).toBe(429);
    expect(hinted.extraHeaders["retry-after"]).toBe("12");
    const bare = finalError(classifyHttp(429, "credits", "slow down", "rate_limit"), 1, "groq");
    expect(bare.extraHeaders["retry-after"]).toBe("1");
    // Other failures carry none.
    expect(finalError(classifyHttp(503, "credits", "down", "server_error", 12), 1, "groq").extraHeaders["retry-after"]).toBeUndefined();
  });
});

/**
 * Settled tokens wait for one flush per window and tenth of a second: a busy window does not arm a
 * timer per request (the latest flush armed wins, so each request's timer superseded the last).
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import type { KeyContext } from "../../src/context/key-context";
import { countTokens } from "../../src/rate-limits/admission";

/** An organization with a token limit (its window counts settled tokens); the key has no limits of its own. */
const ctx = {
  key: { id: "key_flush_timers", requestsPerMinute: null, tokensPerMinute: null },
  organization: { id: "org_flush_timers", plan: "enterprise", requestsPerMinute: null, tokensPerMinute: 1_000_000 },
} as unknown as KeyContext;

afterEach(() => {
  vi.clearAllTimers();
  vi.useRealTimers();
});

describe("settled tokens' flush timers", () => {
  it("50 requests settled over 50 ms arm one flush timer, not 50", () => {
    const deployed = Object.create(env, { SETTLE_BATCH_MS: { value: "1000" } }) as Env;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const start = 1_800_000_000_000; // on the 100 ms grid
    for (let i = 0; i < 50; i++) {
      vi.setSystemTime(start + i);
      countTokens(deployed, ctx, 10);
    }
    expect(vi.getTimerCount()).toBe(1);
  });
});

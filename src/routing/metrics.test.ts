import { describe, expect, it } from "vitest";
import { addSample, summarize, type AttemptSample, type Bucket } from "./metrics";

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const s = (outcome: AttemptSample["outcome"], minutesAgo = 0, extra: Partial<AttemptSample> = {}): AttemptSample => ({
  provider: "p", model: "m", at: now - minutesAgo * 60_000, outcome, ttftMs: null, outputTokens: 0, generationMs: null, ...extra,
});

describe("live metrics", () => {
  it("starts at 100% and drops below 90% after a failure", () => {
    expect(summarize([], now).uptime).toBe(1);
    const b = addSample([], s("error"));
    expect(summarize(b, now).uptime).toBeLessThan(0.9);
  });

  it("ignores client errors", () => {
    const b = addSample([], s("client_error"));
    expect(summarize(b, now)).toMatchObject({ uptime: 1, requests: 0 });
  });

  it("weights recent minutes more than old ones", () => {
    let recentFail: Bucket[] = [];
    let oldFail: Bucket[] = [];
    for (let i = 0; i < 5; i++) {
      recentFail = addSample(recentFail, s("ok", 20));
      oldFail = addSample(oldFail, s("ok", 0));
    }
    recentFail = addSample(recentFail, s("error", 0));
    oldFail = addSample(oldFail, s("error", 20));
    expect(summarize(recentFail, now).uptime).toBeLessThan(summarize(oldFail, now).uptime);
  });

  it("forgets samples outside the 30-minute window", () => {
    const b = addSample([], s("error", 45));
    expect(summarize(b, now).uptime).toBe(1);
  });

  it("computes throughput and time to first token", () => {
    const b = addSample([], s("ok", 0, { ttftMs: 200, outputTokens: 100, generationMs: 2000 }));
    const sum = summarize(b, now);
    expect(sum.latencyMs).toBe(200);
    expect(sum.throughput).toBe(50);
  });
});

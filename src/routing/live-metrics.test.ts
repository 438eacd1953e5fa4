import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../env";
import { continentStats, reportAttempts, resetLiveMetrics, routeStats } from "./live-metrics";
import type { AttemptSample } from "./metrics";

// A metrics namespace whose objects take every write: this test reads only the isolate's own view.
const env = {
  PROVIDER_METRICS: { idFromName: (name: string) => name, get: () => ({ record: async () => undefined, snapshot: async () => ({}) }) },
} as unknown as Env;
const background: Array<Promise<unknown>> = [];
const waitUntil = (p: Promise<unknown>) => void background.push(p.catch(() => undefined));

const sample = (over: Partial<AttemptSample> = {}): AttemptSample => ({
  provider: "openai",
  model: "gpt-4o-mini",
  at: Date.now(),
  outcome: "ok",
  ttftMs: 100,
  outputTokens: 10,
  generationMs: 100,
  ...over,
});

afterEach(() => resetLiveMetrics());

describe("the isolate's stats per series, computed once per change", () => {
  it("a sample added to a series shows in the next read of it, globally and for its continent", () => {
    const now = Date.now();
    expect(routeStats("openai", "gpt-4o-mini", now).samples).toBe(0);
    reportAttempts(env, waitUntil, [sample({ at: now })], "EU");
    const first = routeStats("openai", "gpt-4o-mini", now);
    expect(first.samples).toBe(1);
    expect(first.latencyMs).toBe(100);
    // Read again without a change: the same figures.
    expect(routeStats("openai", "gpt-4o-mini", now)).toEqual(first);
    reportAttempts(env, waitUntil, [sample({ at: now, ttftMs: 300 })], "EU");
    const second = routeStats("openai", "gpt-4o-mini", now);
    expect(second.samples).toBe(2);
    expect(second.latencyMs).toBe(200);
    expect(continentStats("EU", "openai", "gpt-4o-mini", now).samples).toBe(2);
    expect(continentStats("NA", "openai", "gpt-4o-mini", now).samples).toBe(0);
  });

  it("a sample of another series leaves this one's figures as they were; a failure lowers uptime at once", () => {
    const now = Date.now();
    reportAttempts(env, waitUntil, [sample({ at: now })]);
    const before = routeStats("openai", "gpt-4o-mini", now);
    reportAttempts(env, waitUntil, [sample({ at: now, model: "gpt-4o", outcome: "error", ttftMs: null })]);
    expect(routeStats("openai", "gpt-4o-mini", now)).toEqual(before);
    expect(routeStats("openai", "gpt-4o", now).uptime).toBeLessThan(before.uptime);
  });

  it("the figures decay with the minute they are read in, not the minute they were first computed", () => {
    const now = Date.now();
    reportAttempts(env, waitUntil, [sample({ at: now, outcome: "error", ttftMs: null })]);
    const fresh = routeStats("openai", "gpt-4o-mini", now);
    const later = routeStats("openai", "gpt-4o-mini", now + 10 * 60_000);
    // Ten minutes on, the failure weighs less: uptime is back up.
    expect(later.uptime).toBeGreaterThan(fresh.uptime);
  });
});

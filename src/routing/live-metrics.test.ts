import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../env";
import { continentStats, maybeRefreshMetrics, reportAttempts, resetLiveMetrics, routeStats } from "./live-metrics";
import { addSample, seriesKey, type AttemptSample, type Bucket, type Series } from "./metrics";

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

describe("a series with a snapshot and local samples", () => {
  const at = Date.now();
  // The object's snapshot: an hour-old bucket before the maximum existed, and recent ones.
  const snapshotBuckets = (): Bucket[] => {
    let b: Bucket[] = [];
    for (const s of [sample({ at: at - 2 * 60_000, ttftMs: 900 }), sample({ at: at - 60_000, outcome: "error", ttftMs: null }), sample({ at, ttftMs: 50 })]) b = addSample(b, s);
    delete b[0]!.ttftMaxMs;
    return b;
  };
  const withSnapshot = (series: Series) =>
    ({ PROVIDER_METRICS: { idFromName: (name: string) => name, get: () => ({ record: async () => undefined, snapshot: async () => series }) } }) as unknown as Env;
  const loadSnapshot = async () => {
    maybeRefreshMetrics(withSnapshot({ [seriesKey("openai", "gpt-4o-mini")]: snapshotBuckets() }), waitUntil);
    await Promise.all(background.splice(0));
  };
  const local = [sample({ at, ttftMs: 120 }), sample({ at: at - 2 * 60_000, ttftMs: 2_000 }), sample({ at, outcome: "error", ttftMs: null }), sample({ at, ttftMs: 80 })];

  it("reads the same figures sample by sample as from one merge of them all", async () => {
    await loadSnapshot();
    const seen = [];
    for (const s of local) {
      reportAttempts(env, waitUntil, [s]);
      seen.push(routeStats("openai", "gpt-4o-mini", at));
    }
    resetLiveMetrics();
    await loadSnapshot();
    reportAttempts(env, waitUntil, local);
    expect(seen.at(-1)).toEqual(routeStats("openai", "gpt-4o-mini", at));
    expect(seen.at(-1)!.samples).toBe(7);
  });

  it("leaves the snapshot's own buckets as they came", async () => {
    const series: Series = { [seriesKey("openai", "gpt-4o-mini")]: snapshotBuckets() };
    maybeRefreshMetrics(withSnapshot(series), waitUntil);
    await Promise.all(background.splice(0));
    for (const s of local) {
      reportAttempts(env, waitUntil, [s]);
      routeStats("openai", "gpt-4o-mini", at);
    }
    expect(series[seriesKey("openai", "gpt-4o-mini")]).toEqual(snapshotBuckets());
  });
});

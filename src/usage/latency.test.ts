import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { getDb } from "../db/client";
import { newId } from "../lib/ids";
import { applyLogRecords, incomingOf } from "./log-consumer";
import { logRowJson, toLogRow } from "./request-log";
import type { KeyContext } from "../context/key-context";
import type { AnalyticsScope } from "./analytics-scope";
import { HOUR_MS, rebuildHour } from "./aggregate";
import { bucketOf, BUCKETS, HISTOGRAM_COLUMNS, latencyByGroup, percentile } from "./latency";

const T0 = Date.UTC(2026, 1, 3, 9, 0, 0);
const auth = { organization: { id: "org_lat" }, project: { id: "proj_lat" }, key: { id: "key_lat" } } as unknown as KeyContext;
const scope: AnalyticsScope = { type: "project", organizationId: "org_lat", projectId: "proj_lat", projectName: "p", memberId: "m", role: "owner", description: "" };

function rec(o: { at?: number; provider?: string; model?: string; latencyMs: number | null; ttftMs?: number | null; statusCode?: number; cached?: boolean }) {
  const row = toLogRow({
    logId: newId("log"), requestId: newId("req"), auth, sourceApp: "cursor", requestedModel: o.model ?? "gpt-4o-mini", usedProvider: o.provider ?? "openai", usedModel: o.model ?? "gpt-4o-mini",
    statusCode: o.statusCode ?? 200, cached: o.cached ?? false, latencyMs: o.latencyMs, ttftMs: o.ttftMs ?? null, createdAt: o.at ?? T0 + 60_000,
  });
  return incomingOf({ row: logRowJson(row), debit: "0" })!;
}

const histograms = async (hour: number) => {
  const rows = await getDb(env.DB).all<Record<string, number>>(sql.raw(`SELECT ${HISTOGRAM_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(", ")} FROM usage_hourly WHERE hour_start = ${hour}`));
  return HISTOGRAM_COLUMNS.map((c) => Number(rows[0]?.[c] ?? 0));
};

describe("latency histograms", () => {
  it("estimates percentiles inside the bucket and marks the open last bucket", () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(49)).toBe(0);
    expect(bucketOf(50)).toBe(1);
    expect(bucketOf(10 ** 7)).toBe(BUCKETS - 1);
    const h = new Array<number>(BUCKETS).fill(0);
    expect(percentile(h, 0.5)).toBeNull();
    h[bucketOf(120)] = 10; // 100..200
    expect(percentile(h, 0.5)).toEqual({ ms: 150, over: false });
    h[BUCKETS - 1] = 1;
    expect(percentile(h, 0.95)).toEqual({ ms: 25000, over: true });
  });

  it("the consumer counts answered, uncached requests into the buckets; a rebuild from R2 gives the same counts", async () => {
    const hour = T0;
    await applyLogRecords(
      env,
      [
        rec({ latencyMs: 30, ttftMs: 10 }),
        rec({ latencyMs: 450, ttftMs: 120 }),
        rec({ latencyMs: 30_000 }),
        rec({ latencyMs: 300, statusCode: 502 }), // an error: not a latency of an answer
        rec({ latencyMs: 5, cached: true }), // a cache hit: says nothing about the provider
      ],
      hour + 2 * HOUR_MS,
    );
    const expected = new Array<number>(2 * BUCKETS).fill(0);
    expected[bucketOf(30)] = 1;
    expected[bucketOf(450)] = 1;
    expected[bucketOf(30_000)] = 1;
    expected[BUCKETS + bucketOf(10)] = 1;
    expected[BUCKETS + bucketOf(120)] = 1;
    expect(await histograms(hour)).toEqual(expected);
    await getDb(env.DB).run(sql`UPDATE usage_hourly SET lat_b0 = 77, ttft_b3 = 5 WHERE hour_start = ${hour}`);
    await rebuildHour(env, hour, hour + 5 * HOUR_MS);
    expect(await histograms(hour)).toEqual(expected);
  });

  it("p50/p95 of total latency and TTFT per model and per provider over a period", async () => {
    const at = T0 + 4 * HOUR_MS + 60_000;
    const batch = [
      ...Array.from({ length: 19 }, () => rec({ at, provider: "openai", model: "gpt-4o", latencyMs: 800, ttftMs: 300 })),
      rec({ at, provider: "openai", model: "gpt-4o", latencyMs: 9000, ttftMs: 5000 }),
      ...Array.from({ length: 4 }, () => rec({ at, provider: "anthropic", model: "claude-sonnet-4", latencyMs: 1200 })),
    ];
    await applyLogRecords(env, batch, at + 2 * HOUR_MS);
    const period = { fromMs: T0 + 4 * HOUR_MS, toMs: T0 + 5 * HOUR_MS };
    const byModel = await latencyByGroup(env, scope, period, "model");
    expect(byModel.map((r) => r.id)).toEqual(["gpt-4o", "claude-sonnet-4"]);
    const gpt = byModel[0]!;
    expect(gpt.measured).toBe(20);
    // 19 of 20 in 700..1000: the median falls there, the 95th (rank 19) is the bucket's top.
    expect(gpt.p50!.ms).toBeGreaterThanOrEqual(700);
    expect(gpt.p50!.ms).toBeLessThan(1000);
    expect(gpt.p95).toEqual({ ms: 1000, over: false });
    expect(gpt.ttftP50!.ms).toBeGreaterThanOrEqual(200);
    expect(gpt.ttftP50!.ms).toBeLessThan(400);
    const claude = byModel[1]!;
    expect(claude.ttftMeasured).toBe(0);
    expect(claude.ttftP50).toBeNull();
    const byProvider = await latencyByGroup(env, scope, period, "provider");
    expect(byProvider.map((r) => [r.id, r.measured])).toEqual([["openai", 20], ["anthropic", 4]]);
    // Another organization's scope sees nothing.
    expect(await latencyByGroup(env, { ...scope, organizationId: "org_other" }, period, "model")).toEqual([]);
  });
});

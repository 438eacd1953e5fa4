import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { getDb } from "../db/client";
import { requestLogs } from "../db/schema";
import { newId } from "../lib/ids";
import { aggregateUsage, FINAL_GRACE_MS, HOUR_MS, hourStartOf, readAggregationState, REFUSED } from "./aggregate";

// A fixed clock, far from the other test files' data (storage is per file anyway).
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

async function log(at: number, cost: number, source = "cursor") {
  await getDb(env.DB).insert(requestLogs).values({
    id: newId("log"),
    requestId: newId("req"),
    organizationId: "org_x",
    projectId: "proj_x",
    apiKeyId: "key_x",
    sourceApp: source,
    requestedModel: "gpt-4o-mini",
    usedProvider: "openai",
    usedModel: "gpt-4o-mini",
    statusCode: 200,
    costPico: cost,
    createdAt: at,
  });
}

const hourRows = () =>
  getDb(env.DB).all<{ h: number; r: number; c: number }>(sql`SELECT hour_start AS h, SUM(requests) AS r, SUM(cost_pico) AS c FROM usage_hourly GROUP BY hour_start ORDER BY hour_start`);

describe("aggregateUsage", () => {
  beforeAll(async () => {
    await log(T0 + 60_000, 1);
    await log(T0 + 2 * HOUR_MS + 60_000, 2);
  });

  it("first run starts at the oldest log; the current hour is not final", async () => {
    const run = await aggregateUsage(env, T0 + 30 * 60_000);
    expect(run.rebuilt[0]!.from).toBe(T0);
    expect(await hourRows()).toEqual([{ h: T0, r: 1, c: 1 }]);
    // The current hour is not final.
    expect((await readAggregationState(getDb(env.DB)))!.aggregatedUntil).toBe(T0);
  });

  it("re-aggregates the current hour for freshness", async () => {
    await log(T0 + 40 * 60_000, 10);
    await aggregateUsage(env, T0 + 45 * 60_000);
    expect(await hourRows()).toEqual([{ h: T0, r: 2, c: 11 }]);
  });

  it("an hour is final only after the grace period", async () => {
    await aggregateUsage(env, T0 + HOUR_MS + FINAL_GRACE_MS - 1);
    expect((await readAggregationState(getDb(env.DB)))!.aggregatedUntil).toBe(T0);
    await aggregateUsage(env, T0 + HOUR_MS + FINAL_GRACE_MS);
    expect((await readAggregationState(getDb(env.DB)))!.aggregatedUntil).toBe(T0 + HOUR_MS);
  });

  it("catches up after missed runs and records updatedAt", async () => {
    const later = T0 + 5 * HOUR_MS + FINAL_GRACE_MS + 60_000;
    await log(T0 + 4 * HOUR_MS + 1, 4);
    await aggregateUsage(env, later);
    expect(await hourRows()).toEqual([
      { h: T0, r: 2, c: 11 },
      { h: T0 + 2 * HOUR_MS, r: 1, c: 2 },
      { h: T0 + 4 * HOUR_MS, r: 1, c: 4 },
    ]);
    const state = (await readAggregationState(getDb(env.DB)))!;
    expect(state.aggregatedUntil).toBe(hourStartOf(later));
    expect(state.updatedAt).toBe(later);
  });

  it("never rebuilds finalized hours (so retention cannot erase them)", async () => {
    await getDb(env.DB).run(sql`DELETE FROM request_logs WHERE created_at < ${T0 + HOUR_MS}`);
    await aggregateUsage(env, T0 + 6 * HOUR_MS);
    expect((await hourRows())[0]).toEqual({ h: T0, r: 2, c: 11 });
  });

  it("counts refused requests (no provider tried) under their own label, never as a provider 'unknown' or an unknown model id", async () => {
    const at = T0 + 6 * HOUR_MS + 60_000;
    const base = { organizationId: "org_x", projectId: "proj_x", apiKeyId: "key_x", sourceApp: "cursor", createdAt: at };
    await getDb(env.DB).insert(requestLogs).values([
      { ...base, id: newId("log"), requestId: newId("req"), requestedModel: "not-a-model", requestedProvider: "", statusCode: 400 },
      { ...base, id: newId("log"), requestId: newId("req"), requestedModel: "gpt-4o", statusCode: 403 },
      { ...base, id: newId("log"), requestId: newId("req"), requestedModel: "gpt-4o", usedProvider: "openai", usedModel: "gpt-4o", statusCode: 502 },
    ]);
    await aggregateUsage(env, T0 + 6 * HOUR_MS + 30 * 60_000);
    const rows = await getDb(env.DB).all<{ p: string; m: string; r: number; e: number }>(
      sql`SELECT provider AS p, model AS m, requests AS r, errors AS e FROM usage_hourly WHERE hour_start = ${T0 + 6 * HOUR_MS} ORDER BY provider`,
    );
    expect(rows).toEqual([
      { p: "openai", m: "gpt-4o", r: 1, e: 1 },
      { p: REFUSED, m: REFUSED, r: 2, e: 2 },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { getDb } from "../db/client";
import { newId } from "../lib/ids";
import { applyLogRecords, incomingOf } from "./log-consumer";
import { logRowJson, toLogRow } from "./request-log";
import type { KeyContext } from "../context/key-context";
import { closeHours, FINAL_GRACE_MS, HOUR_MS, readAggregationState, rebuildHour, REFUSED } from "./aggregate";

// A fixed clock, far from the other test files' data (storage is per file anyway).
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const auth = { organization: { id: "org_x" }, project: { id: "proj_x" }, key: { id: "key_x" } } as unknown as KeyContext;

function record(at: number, cost: number, source = "cursor") {
  const row = toLogRow({ logId: newId("log"), requestId: newId("req"), auth, sourceApp: source, requestedModel: "gpt-4o-mini", usedProvider: "openai", usedModel: "gpt-4o-mini", statusCode: 200, costPico: BigInt(cost), createdAt: at });
  return incomingOf({ row: logRowJson(row), debit: "0" })!;
}

const hourRows = () =>
  getDb(env.DB).all<{ h: number; r: number; c: number }>(sql`SELECT hour_start AS h, SUM(requests) AS r, SUM(cost_pico) AS c FROM usage_hourly GROUP BY hour_start ORDER BY hour_start`);

describe("hourly aggregates", () => {
  it("the consumer adds each batch to its hours; the cron closes an hour only after the grace period", async () => {
    await applyLogRecords(env, [record(T0 + 60_000, 1), record(T0 + 2 * HOUR_MS + 60_000, 2)], T0 + 3 * HOUR_MS);
    await applyLogRecords(env, [record(T0 + 40 * 60_000, 10)], T0 + 3 * HOUR_MS);
    expect(await hourRows()).toEqual([
      { h: T0, r: 2, c: 11 },
      { h: T0 + 2 * HOUR_MS, r: 1, c: 2 },
    ]);
    await closeHours(env, T0 + HOUR_MS + FINAL_GRACE_MS - 1);
    expect((await readAggregationState(getDb(env.DB)))!.aggregatedUntil).toBe(T0);
    await closeHours(env, T0 + HOUR_MS + FINAL_GRACE_MS);
    const state = (await readAggregationState(getDb(env.DB)))!;
    expect(state).toEqual({ aggregatedUntil: T0 + HOUR_MS, updatedAt: T0 + HOUR_MS + FINAL_GRACE_MS });
    // Never backwards (a late or repeated run).
    await closeHours(env, T0);
    expect((await readAggregationState(getDb(env.DB)))!.aggregatedUntil).toBe(T0 + HOUR_MS);
  });

  it("rebuilds an hour from its records in R2, whatever its aggregates say", async () => {
    await getDb(env.DB).run(sql`UPDATE usage_hourly SET requests = 99, cost_pico = 12345 WHERE hour_start = ${T0}`);
    const result = await rebuildHour(env, T0, T0 + 5 * HOUR_MS);
    expect(result).toMatchObject({ hour: new Date(T0).toISOString(), organizations: 1, records: 2 });
    expect(await hourRows()).toEqual([
      { h: T0, r: 2, c: 11 },
      { h: T0 + 2 * HOUR_MS, r: 1, c: 2 },
    ]);
  });

  it("counts refused requests (no provider tried) under their own label, never as a provider 'unknown' or an unknown model id, in the consumer and in a rebuild", async () => {
    const hour = T0 + 6 * HOUR_MS;
    const at = hour + 60_000;
    const one = (fields: { requestedModel: string; requestedProvider?: string; usedProvider?: string; usedModel?: string; statusCode: number }) =>
      incomingOf({ row: logRowJson(toLogRow({ logId: newId("log"), requestId: newId("req"), auth, sourceApp: "cursor", createdAt: at, ...fields })), debit: "0" })!;
    await applyLogRecords(
      env,
      [
        one({ requestedModel: "not-a-model", requestedProvider: "", statusCode: 400 }),
        one({ requestedModel: "gpt-4o", statusCode: 403 }),
        one({ requestedModel: "gpt-4o", usedProvider: "openai", usedModel: "gpt-4o", statusCode: 502 }),
      ],
      hour + 2 * HOUR_MS,
    );
    const rows = () =>
      getDb(env.DB).all<{ p: string; m: string; r: number; e: number }>(
        sql`SELECT provider AS p, model AS m, requests AS r, errors AS e FROM usage_hourly WHERE hour_start = ${hour} ORDER BY provider`,
      );
    const expected = [
      { p: "openai", m: "gpt-4o", r: 1, e: 1 },
      { p: REFUSED, m: REFUSED, r: 2, e: 2 },
    ];
    expect(await rows()).toEqual(expected);
    await rebuildHour(env, hour, hour + 5 * HOUR_MS);
    expect(await rows()).toEqual(expected);
  });
});

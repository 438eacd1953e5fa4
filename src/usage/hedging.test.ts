import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { getDb } from "../db/client";
import { newId } from "../lib/ids";
import { applyLogRecords, incomingOf } from "./log-consumer";
import { logRowJson, toLogRow } from "./request-log";
import type { KeyContext } from "../context/key-context";
import type { AnalyticsScope } from "./analytics-scope";
import type { RoutingAttempt } from "../db/schema";
import { HOUR_MS, rebuildHour } from "./aggregate";
import { getUsageReport } from "./analytics";
import { hedgeOf } from "./hedging";

const T0 = Date.UTC(2026, 1, 5, 9, 0, 0);
const auth = { organization: { id: "org_hedge" }, project: { id: "proj_hedge" }, key: { id: "key_hedge" } } as unknown as KeyContext;
const scope: AnalyticsScope = { type: "project", organizationId: "org_hedge", projectId: "proj_hedge", projectName: "p", memberId: "m", role: "owner", description: "" };

const won: RoutingAttempt = { provider: "azure", model: "gpt-4o-mini", status_code: 200, succeeded: true, credentialSource: "credits" };
const lost = (hedgeCost: number): RoutingAttempt => ({ provider: "openai", model: "gpt-4o-mini", status_code: 499, succeeded: false, credentialSource: "credits", error_type: "hedge_cancelled", hedge_cost: hedgeCost });
const failed: RoutingAttempt = { provider: "openai", model: "gpt-4o-mini", status_code: 504, succeeded: false, credentialSource: "credits", error_type: "timeout" };

function rec(routing: RoutingAttempt[]) {
  const row = toLogRow({
    logId: newId("log"), requestId: newId("req"), auth, sourceApp: "cursor", requestedModel: "gpt-4o-mini", usedProvider: "azure", usedModel: "gpt-4o-mini",
    statusCode: 200, latencyMs: 900, createdAt: T0 + 60_000, routing,
  });
  return incomingOf({ row: logRowJson(row), debit: "0" })!;
}

const hedgeColumns = async (hour: number) => {
  const rows = await getDb(env.DB).all<{ h: number; c: number }>(sql`SELECT SUM(hedged_requests) AS h, SUM(hedge_cost_pico) AS c FROM usage_hourly WHERE hour_start = ${hour}`);
  return { hedged: Number(rows[0]?.h ?? 0), costPico: Number(rows[0]?.c ?? 0) };
};

describe("hedge cost in the hourly aggregates", () => {
  it("counts a request with a cancelled hedge once and sums the cancelled attempts' cost", () => {
    expect(hedgeOf([won])).toEqual({ hedged: 0, costPico: 0n });
    expect(hedgeOf([failed, won])).toEqual({ hedged: 0, costPico: 0n });
    expect(hedgeOf([lost(0), won])).toEqual({ hedged: 1, costPico: 0n });
    expect(hedgeOf([lost(0.0000125), lost(0.000002), won])).toEqual({ hedged: 1, costPico: 14_500_000n });
    expect(hedgeOf(null)).toEqual({ hedged: 0, costPico: 0n });
  });

  it("the consumer and a rebuild from R2 agree; the usage report shows hedged requests and their cost", async () => {
    const hour = T0;
    await applyLogRecords(env, [rec([won]), rec([failed, won]), rec([lost(0), won]), rec([lost(0.0000125), won]), rec([won, lost(0.000003)])], hour + 2 * HOUR_MS);
    const expected = { hedged: 3, costPico: 15_500_000 };
    expect(await hedgeColumns(hour)).toEqual(expected);
    await getDb(env.DB).run(sql`UPDATE usage_hourly SET hedged_requests = 40, hedge_cost_pico = 7 WHERE hour_start = ${hour}`);
    await rebuildHour(env, hour, hour + 5 * HOUR_MS);
    expect(await hedgeColumns(hour)).toEqual(expected);
    const report = await getUsageReport(env, scope, { from: "2026-02-05", to: "2026-02-05" }, hour + 5 * HOUR_MS);
    expect(report.totals).toMatchObject({ requests: 5, hedgedRequests: 3, hedgeCostUsd: "0.0000155" });
    // Another organization's report counts none of them.
    const other = await getUsageReport(env, { ...scope, organizationId: "org_other" }, { from: "2026-02-05", to: "2026-02-05" }, hour + 5 * HOUR_MS);
    expect(other.totals.hedgedRequests).toBe(0);
  });
});

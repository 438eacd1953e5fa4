/**
 * Usage analytics end to end: request records applied by the LOGS consumer (as the queue delivers
 * them) into usage_hourly, the cron closes the hours, the MCP tools report them. Every total is compared with a count made in JS from
 * the inserted rows.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import worker from "../../src/index";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, members, projects, users } from "../../src/db/schema";
import { applyRows, type LogRowInsert } from "../helpers/logs";
import { syncKeys } from "../../src/keys/sync";
import { newId } from "../../src/lib/ids";
import { formatUsd } from "../../src/billing/money";
import { runScheduled } from "../../src/scheduled";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import { connectClient, textOf } from "./helpers";

const DAY_MS = 86_400_000;
const NOW = Date.now();
const today = new Date(NOW).toISOString().slice(0, 10);
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
/** Activity starts 3 days ago, on an hour boundary plus some minutes. */
const H0 = hourStartOf(NOW) - 3 * DAY_MS;

interface LogSpec {
  key: "owner" | "dev" | "devOld" | "other";
  at: number;
  provider: string | null;
  model: string;
  source: string;
  status?: number;
  cached?: boolean;
  prompt?: number;
  completion?: number;
  reasoning?: number;
  cachedTokens?: number;
  cost?: number;
  credits?: number;
  byok?: number;
  storage?: number;
}

const LOGS: LogSpec[] = [
  { key: "owner", at: H0 + 10 * 60_000, provider: "openai", model: "gpt-4o-mini", source: "claude-code", prompt: 100, completion: 50, cost: 1_000_000, credits: 1_000_000 },
  { key: "owner", at: H0 + 20 * 60_000, provider: "openai", model: "gpt-4o-mini", source: "Claude Code", status: 500 },
  { key: "owner", at: H0 + DAY_MS, provider: "anthropic", model: "claude-sonnet-4", source: "unknown", cached: true, prompt: 10, completion: 5, cost: 2_500_000, byok: 2_500_000, storage: 100 },
  // Two requests whose cost sum exceeds 2^53 pico-dollars: exact only with integer SQL + bigint.
  { key: "owner", at: H0 + DAY_MS + 5 * 60_000, provider: "anthropic", model: "claude-sonnet-4", source: "my-custom-app", cost: 9_000_000_000_000_000, credits: 9_000_000_000_000_000 },
  { key: "owner", at: H0 + DAY_MS + 6 * 60_000, provider: "anthropic", model: "claude-sonnet-4", source: "my-custom-app", cost: 9_000_000_000_000_000, credits: 9_000_000_000_000_000 },
  { key: "dev", at: H0 + 2 * HOUR_MS, provider: "openai", model: "gpt-4o-mini", source: "cursor", prompt: 1000, completion: 500, reasoning: 100, cachedTokens: 200, cost: 3_000_000_000_000, credits: 3_000_000_000_000 },
  { key: "dev", at: H0 + 2 * HOUR_MS + 5 * 60_000, provider: "google-ai-studio", model: "gemini-2.5-flash", source: "cursor", status: 429 },
  { key: "dev", at: H0 + 2 * DAY_MS, provider: null, model: "gpt-4o-mini", source: "cursor", prompt: 7, completion: 3, cost: 10, credits: 10 },
  // Inactive key of the developer: its history still counts for them.
  { key: "devOld", at: H0 + 3 * HOUR_MS, provider: "openai", model: "gpt-4o-mini", source: "cline", prompt: 1, completion: 1, cost: 5, credits: 5 },
  // Another project of the same organization: never visible from this project.
  { key: "other", at: H0 + 30 * 60_000, provider: "openai", model: "gpt-4o-mini", source: "cursor", prompt: 99, completion: 99, cost: 999, credits: 999 },
];

let org: SeededOrg;
let devKey: string;
const keyIds: Record<LogSpec["key"], string> = { owner: "", dev: "", devOld: "", other: "" };
let otherProjectId: string;

async function insertLogs(specs: LogSpec[]) {
  const rows: LogRowInsert[] = [];
  for (const l of specs) {
    const prompt = l.prompt ?? 0;
    const completion = l.completion ?? 0;
    rows.push({
      id: newId("log"),
      requestId: newId("req"),
      organizationId: org.orgId,
      projectId: l.key === "other" ? otherProjectId : org.projectId,
      apiKeyId: keyIds[l.key],
      sourceApp: l.source,
      requestedModel: l.model,
      usedModel: l.model,
      usedProvider: l.provider,
      statusCode: l.status ?? 200,
      cached: l.cached ?? false,
      promptTokens: prompt,
      completionTokens: completion,
      reasoningTokens: l.reasoning ?? 0,
      cachedTokens: l.cachedTokens ?? 0,
      totalTokens: prompt + completion,
      costPico: l.cost ?? 0,
      creditsCostPico: l.credits ?? 0,
      byokCostPico: l.byok ?? 0,
      dataStorageCostPico: l.storage ?? 0,
      createdAt: l.at,
    });
  }
  await applyRows(rows);
}

/** The expected totals, counted in JS from the specs. */
function handCount(specs: LogSpec[]) {
  const sum = (f: (l: LogSpec) => number) => specs.reduce((a, l) => a + BigInt(f(l)), 0n);
  return {
    requests: specs.length,
    errors: specs.filter((l) => (l.status ?? 200) >= 400).length,
    cacheHits: specs.filter((l) => l.cached).length,
    tokens: {
      prompt: Number(sum((l) => l.prompt ?? 0)),
      completion: Number(sum((l) => l.completion ?? 0)),
      reasoning: Number(sum((l) => l.reasoning ?? 0)),
      cached: Number(sum((l) => l.cachedTokens ?? 0)),
      total: Number(sum((l) => (l.prompt ?? 0) + (l.completion ?? 0))),
    },
    costUsd: formatUsd(sum((l) => l.cost ?? 0)),
    creditsCostUsd: formatUsd(sum((l) => l.credits ?? 0)),
    byokCostUsd: formatUsd(sum((l) => l.byok ?? 0)),
    dataStorageCostUsd: formatUsd(sum((l) => l.storage ?? 0)),
    // None of these records was hedged (src/usage/hedging.test.ts counts hedges).
    hedgedRequests: 0,
    hedgeCostUsd: "0",
  };
}

const ownerVisible = LOGS.filter((l) => l.key !== "other");
const devVisible = LOGS.filter((l) => l.key === "dev" || l.key === "devOld");

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await client.callTool({ name, arguments: args });
  return r as { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type: string; text?: string }> };
}

let owner: Client;
let dev: Client;

beforeAll(async () => {
  org = await seedOrg();
  const db = getDb(env.DB);
  keyIds.owner = org.keyId;
  // A developer member with two keys; one gets disabled after it was used.
  const userId = newId("user");
  const memberId = newId("mem");
  await db.insert(users).values({ id: userId, email: `dev-${userId}@example.test`, name: "Dev" });
  await db.insert(members).values({ id: memberId, organizationId: org.orgId, userId, role: "developer" });
  const d = await addKey(org, { createdBy: memberId, description: "dev key" });
  devKey = d.token;
  keyIds.dev = d.row.id;
  const old = await addKey(org, { createdBy: memberId, description: "old dev key" });
  keyIds.devOld = old.row.id;
  otherProjectId = newId("proj");
  await db.insert(projects).values({ id: otherProjectId, organizationId: org.orgId, name: "Other" });
  const other = await addKey(org, { projectId: otherProjectId, description: "other project" });
  keyIds.other = other.row.id;

  await insertLogs(LOGS);
  const [disabled] = await db.update(apiKeys).set({ status: "inactive", version: old.row.version + 1 }).where(eq(apiKeys.id, old.row.id)).returning();
  await syncKeys(env, [disabled!]);

  // The Worker's own scheduled handler, as the cron would call it.
  const ctl = createScheduledController({ scheduledTime: NOW, cron: "* * * * *" });
  const ctx = createExecutionContext();
  worker.scheduled(ctl, env, ctx);
  await waitOnExecutionContext(ctx);

  owner = await connectClient(org.key);
  dev = await connectClient(devKey, { headers: { "x-source": "cursor" } });
});

describe("aggregation", () => {
  it("writes usage_hourly rows that add up to the logs and records aggregatedUntil", async () => {
    const rows = await getDb(env.DB).all<{ r: number; c: string }>(sql`SELECT SUM(requests) AS r, CAST(SUM(cost_pico) AS TEXT) AS c FROM usage_hourly`);
    expect(rows[0]!.r).toBe(LOGS.length);
    expect(BigInt(rows[0]!.c)).toBe(LOGS.reduce((a, l) => a + BigInt(l.cost ?? 0), 0n));
    const state = await getDb(env.DB).all<{ a: number; u: number }>(sql`SELECT aggregated_until AS a, updated_at AS u FROM aggregation_state WHERE id = 'usage_hourly'`);
    expect(state[0]!.u).toBe(NOW);
    // Hours that ended more than the grace period ago are final; the current one is not.
    expect(state[0]!.a).toBeGreaterThanOrEqual(hourStartOf(NOW) - HOUR_MS);
    expect(state[0]!.a).toBeLessThanOrEqual(hourStartOf(NOW));
  });

  it("is idempotent: running again changes nothing", async () => {
    const before = await getDb(env.DB).all(sql`SELECT * FROM usage_hourly ORDER BY hour_start, api_key_id, provider, model, source_app`);
    await runScheduled(createScheduledController({ scheduledTime: NOW + 1000, cron: "* * * * *" }), env);
    const after = await getDb(env.DB).all(sql`SELECT * FROM usage_hourly ORDER BY hour_start, api_key_id, provider, model, source_app`);
    expect(after.length).toBe(before.length);
    expect(after.map((r) => ({ ...(r as object), updated_at: 0 }))).toEqual(before.map((r) => ({ ...(r as object), updated_at: 0 })));
  });
});

describe("get-usage", () => {
  it("owner: totals of every key of the project, exact money, rankings and coverage", async () => {
    const r = await call(owner, "get-usage");
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as Record<string, any>;
    expect(JSON.parse(textOf(r))).toEqual(s);
    expect(s.scope.type).toBe("project");
    expect(s.scope.projectId).toBe(org.projectId);
    expect(s.period).toEqual({ from: dayOf(NOW - 29 * DAY_MS), to: today, granularity: "day", timezone: "UTC" });
    expect(s.totals).toEqual(handCount(ownerVisible));
    expect(s.totals.costUsd).toBe("18003.000003500015"); // 2 x $9000 + $3 + $0.0000035 + 15 pico
    expect(s.updatedAt).toBe(new Date(NOW + 1000).toISOString());
    // Series: one bucket per active day, ascending, adding up to the totals.
    const days = [...new Set(ownerVisible.map((l) => dayOf(l.at)))].sort();
    expect(s.series.map((b: { start: string }) => b.start.slice(0, 10))).toEqual(days);
    expect(s.series.reduce((a: number, b: { requests: number }) => a + b.requests, 0)).toBe(ownerVisible.length);
    // openai: 2 owner + 1 dev + 1 devOld = 4; anthropic 3; google 1; unknown 1.
    expect(s.mostUsedProvider).toEqual({ id: "openai", name: expect.any(String), requests: 4 });
    expect(s.mostUsedModel).toMatchObject({ id: "gpt-4o-mini", requests: 5 });
    // claude-code (1 + 1 via alias) ties my-custom-app at 2 < cursor 3.
    expect(s.mostUsedApp).toEqual({ id: "cursor", name: "Cursor", requests: 3 });
    // The request with no recorded source is ranked as `unknown`: the rankings cover the period.
    expect(s.appUsageCoverage).toEqual({ complete: true, recordedRequests: ownerVisible.length, totalRequests: ownerVisible.length });
  });

  it("developer: only keys they created, including an inactive key's history", async () => {
    const r = await call(dev, "get-usage", { to: today });
    const s = r.structuredContent as Record<string, any>;
    expect(s.scope.type).toBe("own_keys");
    expect(s.scope.role).toBe("developer");
    expect(s.totals).toEqual(handCount(devVisible));
    expect(s.mostUsedProvider).toMatchObject({ id: "openai", requests: 2 });
    expect(s.mostUsedApp).toMatchObject({ id: "cursor", requests: 3 });
    expect(s.appUsageCoverage).toEqual({ complete: true, recordedRequests: 4, totalRequests: 4 });
  });

  it("hourly granularity: one bucket per active hour", async () => {
    const r = await call(owner, "get-usage", { from: dayOf(H0), to: today, granularity: "hour" });
    const s = r.structuredContent as Record<string, any>;
    const hours = [...new Set(ownerVisible.map((l) => hourStartOf(l.at)))].sort((a, b) => a - b).map((h) => new Date(h).toISOString());
    expect(s.series.map((b: { start: string }) => b.start)).toEqual(hours);
    expect(s.totals).toEqual(handCount(ownerVisible));
  });

  it("an empty period: zero totals, empty series, null rankings", async () => {
    const r = await call(owner, "get-usage", { from: "2020-01-01", to: "2020-01-31" });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as Record<string, any>;
    expect(s.totals).toEqual(handCount([]));
    expect(s.series).toEqual([]);
    expect(s.mostUsedProvider).toBeNull();
    expect(s.mostUsedModel).toBeNull();
    expect(s.mostUsedApp).toBeNull();
    expect(s.appUsageCoverage).toEqual({ complete: true, recordedRequests: 0, totalRequests: 0 });
  });

  it("range validation errors are clear tool errors", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ from: "2026-03-10", to: "2026-03-01" }, /must not be after/],
      [{ from: "2024-01-01", to: "2025-01-01" }, /367 days; at most 366/],
      [{ from: "2026-01-01", to: "2026-02-01", granularity: "hour" }, /at most 31 days/],
      [{ from: "2026-02-30" }, /YYYY-MM-DD/],
      [{ to: "yesterday" }, /YYYY-MM-DD/],
    ];
    for (const [args, re] of cases) {
      const r = await call(owner, "get-usage", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(r)).toMatch(re);
    }
    const ok = await call(owner, "get-usage", { from: "2024-01-01", to: "2024-12-31" });
    expect(ok.isError).toBeFalsy();
  });
});

describe("get-usage-breakdown", () => {
  it("ranks apps with aliases merged, unknown kept, ties by id", async () => {
    const r = await call(owner, "get-usage-breakdown", { group_by: "app" });
    const s = r.structuredContent as Record<string, any>;
    const rows = s.rows.map((x: { id: string; requests: number }) => [x.id, x.requests]);
    expect(rows).toEqual([
      ["cursor", 3],
      ["claude-code", 2],
      ["my-custom-app", 2],
      ["cline", 1],
      ["unknown", 1],
    ]);
    expect(s.rows[1].name).toBe("Claude Code");
    expect(s.rows[2].name).toBe("my-custom-app");
    expect(s.pagination).toEqual({ limit: 10, offset: 0, total: 5, hasMore: false, nextOffset: null });
    expect(s.coverage).toEqual({ complete: true, recordedRequests: ownerVisible.length, totalRequests: ownerVisible.length });
  });

  it("sorts by cost and by tokens, paginates with hasMore", async () => {
    const byCost = (await call(owner, "get-usage-breakdown", { group_by: "api_key", sort_by: "cost", limit: 1 })).structuredContent as Record<string, any>;
    expect(byCost.rows).toHaveLength(1);
    expect(byCost.rows[0].id).toBe(keyIds.owner);
    expect(byCost.rows[0].name).toBe("test key");
    expect(byCost.rows[0].costUsd).toBe(handCount(LOGS.filter((l) => l.key === "owner")).costUsd);
    expect(byCost.pagination).toMatchObject({ hasMore: true, nextOffset: 1, total: 3 });
    const page2 = (await call(owner, "get-usage-breakdown", { group_by: "api_key", sort_by: "cost", limit: 1, offset: 1 })).structuredContent as Record<string, any>;
    expect(page2.rows[0].id).toBe(keyIds.dev);
    expect(page2.rows[0].rank).toBe(2);
    const byTokens = (await call(owner, "get-usage-breakdown", { group_by: "model", sort_by: "tokens" })).structuredContent as Record<string, any>;
    expect(byTokens.rows[0]).toMatchObject({ id: "gpt-4o-mini", requests: 5 });
    expect(byTokens.rows[0].tokens.total).toBe(150 + 1500 + 10 + 2);
    const providers = (await call(owner, "get-usage-breakdown", { group_by: "provider" })).structuredContent as Record<string, any>;
    expect(providers.rows.map((x: { id: string }) => x.id)).toEqual(["openai", "anthropic", "google-ai-studio", "unknown"]);
    expect(providers.totals).toEqual(handCount(ownerVisible));
  });

  it("developer breakdown by key lists only their keys", async () => {
    const s = (await call(dev, "get-usage-breakdown", { group_by: "api_key" })).structuredContent as Record<string, any>;
    expect(s.rows.map((x: { id: string }) => x.id).sort()).toEqual([keyIds.dev, keyIds.devOld].sort());
  });

  it("validates group_by, limit and offset", async () => {
    for (const args of [{}, { group_by: "team" }, { group_by: "app", limit: 0 }, { group_by: "app", limit: 101 }, { group_by: "app", offset: 10001 }]) {
      const r = await call(owner, "get-usage-breakdown", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
    }
  });
});

describe("get-account", () => {
  it("owner sees the credit balance; developer does not; no credentials", async () => {
    const o = (await call(owner, "get-account")).structuredContent as Record<string, any>;
    expect(o.role).toBe("owner");
    expect(o.organization.creditBalanceUsd).toBe("100");
    expect(o.analyticsScope.type).toBe("project");
    expect(o.apiKey.id).toBe(org.keyId);
    const d = await call(dev, "get-account");
    const ds = d.structuredContent as Record<string, any>;
    expect(ds.role).toBe("developer");
    expect(ds.organization.creditBalanceUsd).toBeUndefined();
    expect(ds.analyticsScope.type).toBe("own_keys");
    const text = textOf(d);
    expect(text).not.toContain(devKey);
    expect(text).not.toMatch(/fingerprint|swb_[A-Za-z0-9]{40}/);
  });
});

describe("retention", () => {
  it("deletes logs older than the retention period without changing analytics", async () => {
    const old = hourStartOf(NOW) - 40 * DAY_MS;
    const oldLogs: LogSpec[] = [
      { key: "owner", at: old + 60_000, provider: "openai", model: "gpt-4o-mini", source: "aider", prompt: 5, completion: 5, cost: 77, credits: 77 },
      { key: "dev", at: old + 120_000, provider: "openai", model: "gpt-4o-mini", source: "aider", prompt: 1, completion: 2, cost: 3, credits: 3 },
    ];
    // Logs older than aggregatedUntil are never aggregated by the forward-only job; build a fresh
    // state by rewinding it, as a first deployment over existing logs would see.
    await insertLogs(oldLogs);
    await getDb(env.DB).run(sql`DELETE FROM aggregation_state`);
    await runScheduled(createScheduledController({ scheduledTime: NOW, cron: "* * * * *" }), env);
    const range = { from: dayOf(old - 5 * DAY_MS), to: today };
    const before = (await call(owner, "get-usage", range)).structuredContent as Record<string, any>;
    expect(before.totals).toEqual(handCount([...ownerVisible, ...oldLogs]));

    await runScheduled(createScheduledController({ scheduledTime: NOW, cron: "17 3 * * *" }), env);
    const left = await getDb(env.DB).all<{ n: number; m: number }>(sql`SELECT COUNT(*) AS n, MIN(created_at) AS m FROM request_logs`);
    expect(left[0]!.n).toBe(LOGS.length);
    expect(left[0]!.m).toBeGreaterThan(NOW - 30 * DAY_MS);
    const after = (await call(owner, "get-usage", range)).structuredContent as Record<string, any>;
    expect(after.totals).toEqual(before.totals);
    expect(after.series).toEqual(before.series);

    // Later aggregation runs do not erase the aggregates of deleted logs.
    await runScheduled(createScheduledController({ scheduledTime: NOW + 60_000, cron: "* * * * *" }), env);
    const later = (await call(owner, "get-usage", range)).structuredContent as Record<string, any>;
    expect(later.totals).toEqual(before.totals);
  });
});

describe("availability", () => {
  it("analytics stay available for a key over its spend limit", async () => {
    const capped = await addKey(org, { description: "capped", usageLimit: "0" });
    const client = await connectClient(capped.token);
    const r = await call(client, "get-usage");
    expect(r.isError).toBeFalsy();
    const image = await call(client, "generate-image", { prompt: "a cat" });
    expect(image.isError).toBe(true);
    expect(textOf(image)).toMatch(/limit/i);
    await client.close();
  });

  it("an unavailable analytics store is a tool error, never a zero report", async () => {
    const db = getDb(env.DB);
    await db.run(sql`ALTER TABLE usage_hourly RENAME TO usage_hourly_offline`);
    try {
      const r = await call(owner, "get-usage");
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toBeUndefined();
      expect(textOf(r)).toMatch(/unavailable/);
      const b = await call(owner, "get-usage-breakdown", { group_by: "model" });
      expect(b.isError).toBe(true);
    } finally {
      await db.run(sql`ALTER TABLE usage_hourly_offline RENAME TO usage_hourly`);
    }
  });
});

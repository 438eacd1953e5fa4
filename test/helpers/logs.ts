/**
 * Request records in tests: built like the gateway builds them and applied through the LOGS
 * consumer's own code (R2 object, aggregates, window, last use), or awaited after the queue.
 */
import { env } from "cloudflare:workers";
import type { requestLogs } from "../../src/db/schema";
import { logRowJson } from "../../src/usage/request-log";
import { applyLogRecords, incomingOf, type IncomingRecord } from "../../src/usage/log-consumer";
import { newId } from "../../src/lib/ids";
import { groupRecords, hourStartOf } from "../../src/usage/aggregate";
import type { LogRecord } from "../../src/usage/log-record";

export type LogRowInsert = typeof requestLogs.$inferInsert;

/** Columns the gateway always sets (src/usage/request-log.ts `toLogRow`), for rows written by hand. */
const DEFAULTS: Partial<LogRowInsert> = {
  kind: "chat", sourceApp: "unknown", streamed: false, cached: false, clientAborted: false, promptTokens: 0, completionTokens: 0,
  reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0, costPico: 0, creditsCostPico: 0, byokCostPico: 0, dataStorageCostPico: 0,
};

/** A row as the queue carries it (the consumer's input). */
export function incoming(row: LogRowInsert, debit = "0"): IncomingRecord {
  const full = { ...DEFAULTS, ...row };
  for (const [k, v] of Object.entries(DEFAULTS)) if ((full as Record<string, unknown>)[k] === undefined) (full as Record<string, unknown>)[k] = v;
  const r = incomingOf({ row: logRowJson(full), debit });
  if (!r) throw new Error(`not a valid record: ${JSON.stringify(row)}`);
  return r;
}

/** Applies rows as one consumer batch. */
export async function applyRows(rows: LogRowInsert[], now = Date.now()): Promise<number> {
  return applyLogRecords(env, rows.map((r) => incoming(r)), now);
}

/** Waits until the consumer applied every id (the queue delivers within tens of ms in tests). */
export async function waitForApplied(ids: readonly string[], timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await env.DB.prepare("SELECT COUNT(DISTINCT id) AS n FROM log_applied WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).first<{ n: number }>();
    if (r && r.n === ids.length) return;
    if (Date.now() > deadline) throw new Error(`records not applied: ${r?.n ?? 0} of ${ids.length}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

const MODELS = ["gpt-4o-mini", "claude-sonnet-4", "gemini-2.5-flash"] as const;
const PROVIDERS = ["openai", "anthropic", "google-ai-studio"] as const;
const APPS = ["cursor", "cline", ""] as const;

/** Realistic records: three models and apps, some refused, errors and cache hits, `n` spread over `spanMs` from `start`. */
export function sampleRows(org: { orgId: string; projectId: string }, keys: readonly string[], n: number, start: number, spanMs: number): LogRowInsert[] {
  return Array.from({ length: n }, (_, i) => {
    const prompt = (i * 7) % 1000;
    const completion = (i * 13) % 500;
    return {
      id: newId("log"),
      requestId: newId("req"),
      organizationId: org.orgId,
      projectId: org.projectId,
      apiKeyId: keys[i % keys.length]!,
      sourceApp: APPS[i % APPS.length]!,
      requestedModel: MODELS[i % MODELS.length]!,
      usedModel: i % 11 === 0 ? null : MODELS[i % MODELS.length]!,
      usedProvider: i % 11 === 0 ? null : PROVIDERS[i % PROVIDERS.length]!,
      statusCode: i % 17 === 0 ? 502 : 200,
      cached: i % 5 === 0,
      promptTokens: prompt,
      completionTokens: completion,
      reasoningTokens: i % 3,
      cachedTokens: i % 7,
      totalTokens: prompt + completion,
      costPico: 1_000_003 * (i + 1),
      creditsCostPico: i % 2 ? 1_000_003 * (i + 1) : 0,
      byokCostPico: i % 2 ? 0 : 1_000_003 * (i + 1),
      dataStorageCostPico: i % 4,
      latencyMs: 100 + (i % 50),
      createdAt: start + Math.floor((i * spanMs) / n),
    };
  });
}

/** usage_hourly of a project as comparable group rows. */
export async function aggregates(projectId: string) {
  const res = await env.DB.prepare(
    `SELECT hour_start AS h, api_key_id AS k, provider AS p, model AS m, source_app AS s, requests AS n, errors AS e, cache_hits AS ch,
      prompt_tokens AS pt, completion_tokens AS ct, reasoning_tokens AS rt, cached_tokens AS cdt, total_tokens AS tt,
      CAST(cost_pico AS TEXT) AS cost, CAST(credits_cost_pico AS TEXT) AS cr, CAST(byok_cost_pico AS TEXT) AS byk, CAST(data_storage_cost_pico AS TEXT) AS ds
     FROM usage_hourly WHERE project_id = ? ORDER BY h, k, p, m, s`,
  ).bind(projectId).all<Record<string, unknown>>();
  return res.results;
}

/** The same rows computed directly from the records. */
export function directSum(records: readonly LogRecord[]) {
  const byHour = new Map<number, LogRecord[]>();
  for (const r of records) byHour.set(hourStartOf(r.createdAt), [...(byHour.get(hourStartOf(r.createdAt)) ?? []), r]);
  const out = [...byHour].flatMap(([h, list]) =>
    groupRecords(list).map((g) => ({ h, k: g.k, p: g.p, m: g.m, s: g.s, n: g.n, e: g.e, ch: g.ch, pt: g.pt, ct: g.ct, rt: g.rt, cdt: g.cdt, tt: g.tt, cost: g.cost.toString(), cr: g.cr.toString(), byk: g.byk.toString(), ds: g.ds.toString() })),
  );
  const key = (x: (typeof out)[number]) => [x.h, x.k, x.p, x.m, x.s].join("\u0000");
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

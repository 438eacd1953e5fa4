/**
 * The path before the LOGS queue, as the upgrade finds it (git show 8113a72:src/durable-objects/key-outbox.ts
 * and src/usage/aggregate.ts): key outboxes inserted rows into `request_logs` with their credit
 * debits in one D1 batch, and the every-minute cron rebuilt hours from those rows.
 */
import { env } from "cloudflare:workers";
import type { IncomingRecord } from "../../src/usage/log-consumer";
import { LOG_COLUMNS } from "../../src/usage/request-log";
import { HOUR_MS } from "../../src/usage/aggregate";

const INSERT_SQL = `INSERT OR IGNORE INTO request_logs (${LOG_COLUMNS.join(", ")}) SELECT ${LOG_COLUMNS.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ")} FROM json_each(?1)`;

/** The old outbox's debit: the credits of the rows `request_logs` does not hold yet, run before the insert. */
const DEBIT_NEW_ROWS_SQL = `UPDATE organizations SET credits_pico = credits_pico - (
  SELECT COALESCE(SUM(CAST(json_extract(value, '$.c') AS INTEGER)), 0) FROM json_each(?1)
  WHERE NOT EXISTS (SELECT 1 FROM request_logs WHERE request_logs.id = json_extract(value, '$.id'))
) WHERE id = ?2`;

/** The old outbox flush: per organization the debit of the new rows, then the rows (INSERT OR IGNORE), one D1 batch. */
export async function insertOldWay(records: readonly IncomingRecord[]): Promise<void> {
  const debits = new Map<string, Array<{ id: string; c: string }>>();
  for (const r of records) {
    if (r.debit === "0") continue;
    debits.set(r.record.organizationId, [...(debits.get(r.record.organizationId) ?? []), { id: r.record.id, c: r.debit }]);
  }
  await env.DB.batch([
    ...[...debits].map(([org, list]) => env.DB.prepare(DEBIT_NEW_ROWS_SQL).bind(JSON.stringify(list), org)),
    env.DB.prepare(INSERT_SQL).bind(`[${records.map((r) => r.row).join(",")}]`),
  ]);
}

/** The old cron: hours [from, to) rebuilt from request_logs, then aggregatedUntil. */
export async function oldCron(from: number, to: number, until: number, now: number): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM usage_hourly WHERE hour_start >= ?1 AND hour_start < ?2").bind(from, to),
    env.DB.prepare(
      `INSERT INTO usage_hourly (hour_start, organization_id, project_id, api_key_id, provider, model, source_app, requests, errors, cache_hits,
        prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, total_tokens, cost_pico, credits_cost_pico, byok_cost_pico, data_storage_cost_pico, updated_at)
      SELECT created_at - (created_at % ${HOUR_MS}) AS h, MAX(organization_id), project_id, api_key_id, COALESCE(used_provider, requested_provider, 'unknown') AS p,
        COALESCE(used_model, requested_model, 'unknown') AS m, CASE WHEN source_app IS NULL OR source_app = '' THEN 'unknown' ELSE source_app END AS s,
        COUNT(*), SUM(CASE WHEN status_code >= 400 THEN 1 ELSE 0 END), SUM(CASE WHEN cached THEN 1 ELSE 0 END),
        SUM(prompt_tokens), SUM(completion_tokens), SUM(reasoning_tokens), SUM(cached_tokens), SUM(total_tokens),
        SUM(cost_pico), SUM(credits_cost_pico), SUM(byok_cost_pico), SUM(data_storage_cost_pico), ?3
      FROM request_logs WHERE created_at >= ?1 AND created_at < ?2 GROUP BY h, project_id, api_key_id, p, m, s`,
    ).bind(from, to, now),
    env.DB.prepare("INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES ('usage_hourly', ?1, ?2) ON CONFLICT (id) DO UPDATE SET aggregated_until = excluded.aggregated_until, updated_at = excluded.updated_at").bind(until, now),
  ]);
}

/**
 * The KeyState outbox: settled requests waiting to reach the LOGS queue (their records and credit
 * debits), stored in the key's Durable Object SQLite and sent in batches by its alarm. A row leaves
 * the outbox only after the queue accepted it; a failed send keeps it and retries.
 */
import type { Env } from "../env";
import type { Pico } from "../billing/money";
import type { LogEntry } from "../usage/log-queue";

/** What a settled request still has to send: its log row and the credit-paid part of its cost. */
export interface OutboxEntry {
  /** The `request_logs` row as a JSON array in the column order of usage/request-log.ts (`requestLogJson`). */
  row: string;
  logId: string;
  organizationId: string;
  creditsPico: Pico;
}

export const OUTBOX_BATCH = 100;

/** How long settled requests may wait before they are sent to the LOGS queue. Override: LOG_FLUSH_MS. */
export function flushDelayMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).LOG_FLUSH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 250;
}

export interface OutboxRow extends Record<string, SqlStorageValue> {
  seq: number;
  log_id: string;
  org: string;
  credits: string;
  row: string;
}

/**
 * The outbox. Each row also carries the key's spend after its settlement (`spend_seq` orders it
 * against the `spend` value in kv), so a settlement is ONE durable write, not two; the alarm
 * copies the spend to kv before it deletes flushed rows.
 */
export const OUTBOX_COLUMNS: ReadonlyArray<[name: string, type: string]> = [
  ["seq", "INTEGER PRIMARY KEY AUTOINCREMENT"],
  ["log_id", "TEXT NOT NULL"],
  ["org", "TEXT NOT NULL"],
  ["credits", "TEXT NOT NULL"],
  ["row", "TEXT NOT NULL"],
  ["spend_seq", "INTEGER"],
  ["usage", "TEXT"],
  ["period_usage", "TEXT"],
  ["period_started_at", "INTEGER"],
];
/** Columns added after the first release of the table (ALTER TABLE for outboxes created before). */
export const OUTBOX_ADDED_COLUMNS = OUTBOX_COLUMNS.slice(5);
export const OUTBOX_SCHEMA_VERSION = 2;

/** Creates the outbox table, or adds the columns a table created by an older release lacks. */
export function createOutbox(storage: DurableObjectStorage): void {
  storage.sql.exec(`CREATE TABLE IF NOT EXISTS outbox (${OUTBOX_COLUMNS.map(([n, t]) => `${n} ${t}`).join(", ")})`);
  if (storage.kv.get<number>("outboxSchema") === OUTBOX_SCHEMA_VERSION) return;
  for (const [name, type] of OUTBOX_ADDED_COLUMNS) {
    try {
      storage.sql.exec(`ALTER TABLE outbox ADD COLUMN ${name} ${type}`);
    } catch {
      // the table was created with it
    }
  }
  storage.kv.put("outboxSchema", OUTBOX_SCHEMA_VERSION);
}

/** Spend as stored: in kv under "spend", and on every outbox row. `seq` says which is newer. */
export interface PersistedSpend {
  usage: Pico;
  periodUsage: Pico;
  periodStartedAt: number | null;
  /** Bumped by every change; absent in values written before it existed (= 0). */
  seq?: number;
}

export interface OutboxSpendRow extends Record<string, SqlStorageValue> {
  spend_seq: number;
  usage: string;
  period_usage: string;
  period_started_at: number | null;
}

/** The outbox rows as LOGS queue records: each with the credit debit that rides with it. */
export const outboxMessages = (rows: readonly OutboxRow[]): LogEntry[] => rows.map((r) => ({ row: r.row, debit: r.credits }));

/** After a failed send, the next try waits 1 s, 2 s, 4 s ... at most a minute. */
export const sendRetryMs = (failures: number): number => Math.min(60_000, 1000 * 2 ** Math.min(6, Math.max(0, failures - 1)));

/**
 * The key's settled spend as a `key_spend` row (what key lists read instead of calling every
 * key's object). Written by the alarm after the outbox rows it goes with were sent, or alone when
 * spend changed without a log row (images, moderations, refunds). `seq` orders reports: an older one
 * never overwrites a newer (the same one again is harmless).
 */
export function spendReportStatement(env: Env, keyId: string, spend: PersistedSpend, now: number): D1PreparedStatement {
  return env.DB.prepare(SPEND_REPORT_SQL).bind(keyId, spend.usage.toString(), spend.periodUsage.toString(), spend.periodStartedAt, spend.seq ?? 0, now);
}

const SPEND_REPORT_SQL = `INSERT INTO key_spend (api_key_id, usage_pico, period_usage_pico, period_started_at, seq, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (api_key_id) DO UPDATE SET usage_pico = excluded.usage_pico, period_usage_pico = excluded.period_usage_pico,
  period_started_at = excluded.period_started_at, seq = excluded.seq, updated_at = excluded.updated_at
WHERE excluded.seq >= key_spend.seq`;

/** Same figures (the `seq` aside): nothing new to report. */
export const sameSpend = (a: PersistedSpend | null, b: PersistedSpend): boolean =>
  a !== null && a.usage === b.usage && a.periodUsage === b.periodUsage && a.periodStartedAt === b.periodStartedAt;

/**
 * The durable bound's key object (SQLite-backed Durable Object, one per key): what the product's
 * rules put in one place per key, written as small as they allow.
 *  - A global spend cap without a round trip per request: isolates admit against a lease, a slice
 *    of what is left (1/20 of it, at least one request's bound) that lives LEASE_TTL_MS, so a
 *    changed limit reaches every isolate within that time. The object holds each lease's slice
 *    until the isolate reports what it admitted under it (when it takes the next one), then what
 *    of that is not settled yet; a lease never reported stops holding UNCLOSED_TTL_MS after its end.
 *  - The record durable before the answer: `settle` adds each record's cost to the spend and puts
 *    its row in the outbox in one implicit transaction (no await between the writes).
 *  - Every record exported: the alarm, set when the outbox gains rows, sends them to the LOGS
 *    queue in order and deletes them once the queue took them.
 * Leases live in memory, as Switchboard's do: a restarted object forgets them, and the isolates'
 * live slices (each under 1/20 of what was left, for at most LEASE_TTL_MS) are what a cap can be
 * overrun by then.
 */
import { DurableObject } from "cloudflare:workers";

export interface KeyObjectBindings {
  LOGS: Queue<string>;
}

export const LEASE_TTL_MS = 1_000;
const UNCLOSED_TTL_MS = 15 * 60_000;
/** The key's all-time limit, in pico-dollars ($1,000; an admin API would set it, the bound has none). */
const LIMIT_PICO = 1e15;
/** How long settled rows wait in the outbox before the alarm sends them (Switchboard's default). */
const FLUSH_MS = 250;
/** Rows per queue send (the queue takes at most 100 messages per `sendBatch`). */
const SEND_BATCH = 100;

/** A lease as the isolate receives it. */
export interface LeaseGrant {
  id: string;
  slicePico: number;
  ttlMs: number;
}
/** A replaced lease, reported with the next lease call: the bounds of the requests it admitted. */
export interface LeaseClose {
  id: string;
  admittedPico: number;
}
/** One answered request: its lease and bound (to release the hold), its cost and its log row (a JSON array). */
export interface SettleRecord {
  leaseId: string;
  estimatePico: number;
  costPico: number;
  row: string;
}

interface HeldLease {
  slicePico: number;
  settledPico: number;
  /** Set by the isolate's close: what it admitted in all. */
  admittedPico: number | null;
  expiresAt: number;
}

export class KeyObject extends DurableObject<KeyObjectBindings> {
  private spentPico: number;
  private leases = new Map<string, HeldLease>();
  private nextLease = 0;
  private alarmSet = false;

  constructor(ctx: DurableObjectState, env: KeyObjectBindings) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, row TEXT NOT NULL)");
    this.spentPico = ctx.storage.kv.get<number>("spent") ?? 0;
  }

  /** The next lease for an isolate (after its closes), or null when the limit leaves no room for `estimatePico`. */
  lease(closes: LeaseClose[], estimatePico: number): LeaseGrant | null {
    const now = Date.now();
    for (const c of closes) {
      const l = this.leases.get(c.id);
      if (l) l.admittedPico = c.admittedPico;
    }
    let held = 0;
    for (const [id, l] of this.leases) {
      const hold = (l.admittedPico ?? l.slicePico) - l.settledPico;
      if (hold <= 0 || (l.admittedPico === null && now > l.expiresAt + UNCLOSED_TTL_MS)) this.leases.delete(id);
      else held += hold;
    }
    const room = LIMIT_PICO - this.spentPico - held;
    if (room < estimatePico) return null;
    const id = `${now.toString(36)}.${(this.nextLease++).toString(36)}`;
    const slicePico = Math.max(Math.floor(room / 20), estimatePico);
    this.leases.set(id, { slicePico, settledPico: 0, admittedPico: null, expiresAt: now + LEASE_TTL_MS });
    return { id, slicePico, ttlMs: LEASE_TTL_MS };
  }

  /** Stores a group of records durably: spend and outbox rows in one implicit transaction. */
  settle(records: SettleRecord[]): void {
    const sql = this.ctx.storage.sql;
    for (const r of records) {
      this.spentPico += r.costPico;
      const l = this.leases.get(r.leaseId);
      if (l) l.settledPico += r.estimatePico;
      sql.exec("INSERT INTO outbox (row) VALUES (?)", r.row);
    }
    this.ctx.storage.kv.put("spent", this.spentPico);
    if (!this.alarmSet) {
      this.alarmSet = true;
      void this.ctx.storage.setAlarm(Date.now() + FLUSH_MS);
    }
  }

  /** Sends the outbox to the LOGS queue in order; a failed send throws, and the runtime retries the alarm. */
  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    for (let sends = 0; sends < 10; sends++) {
      const rows = sql.exec<{ seq: number; row: string }>("SELECT seq, row FROM outbox ORDER BY seq LIMIT ?", SEND_BATCH).toArray();
      const last = rows[rows.length - 1];
      if (!last) {
        this.alarmSet = false;
        return;
      }
      await this.env.LOGS.sendBatch(rows.map((r) => ({ body: r.row })));
      sql.exec("DELETE FROM outbox WHERE seq <= ?", last.seq);
    }
    await this.ctx.storage.setAlarm(Date.now());
  }
}

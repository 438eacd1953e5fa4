/**
 * OrgCredits: one Durable Object per organization (idFromName(orgId)), the admission authority
 * for credit-paid requests (docs/admission.md). D1 `organizations.credits_pico` stays the ledger;
 * this object knows what D1 does not know yet:
 *  - reservations: the credit-paid upper bound of every request in flight;
 *  - pending debits: credits of settled requests whose record (and with it the debit, applied by
 *    the LOGS queue consumer in the same D1 batch that marks the record applied) is still in a
 *    key's outbox or in the queue. A pending entry is dropped once its record is in `log_applied`
 *    (by the hour of the record's start and its id, as the consumer writes it), which is checked in
 *    the same D1 read as the balance (one consistent snapshot).
 *
 * available = balance read from D1 - pending debits - reservations. A request is admitted while
 * that is above 0, so the balance never ends below minus one request; refused when the settled
 * balance (without reservations) is at or below 0; otherwise it waits (bounded, FIFO), like a key.
 * Top-ups are written to D1 by others: the balance is re-read when it is older than REFRESH_MS, and
 * before any refusal or wait (at most once per RECHECK_MS); a ledger entry (src/billing/credit-ledger.ts)
 * also calls `refresh`, so a drained organization is served at once. Each read also checks the
 * organization's low-balance threshold (src/billing/low-credits.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { Pico } from "../billing/money";
import { AdmissionQueue } from "./admission-queue";
import { LeaseBook, leaseReservationId, type LeaseClose, type LeaseGrant } from "./lease-book";
import { countDoCall, simulatedLatency } from "./debug-latency";
import type { NotificationSettings } from "../db/schema";
import { alertLowCredits, lowCreditsThresholdPico } from "../billing/low-credits";

const REFRESH_MS = 10_000;
const RECHECK_MS = 250;
/** A reservation its isolate never settled is released after this (the isolate died). */
const RESERVATION_TTL_MS = 15 * 60 * 1000;
/** A pending debit whose row never reached D1 is assumed applied after this. */
const PENDING_TTL_MS = 10 * 60 * 1000;
/** Leases only while what is left is worth this many requests like this one, carving this fraction. */
const LEASE_MIN_REQUESTS = 32n;
const LEASE_SLICE_DIVISOR = 8n;

export type CreditGate =
  | { ok: true; reservationId: string; lease?: LeaseGrant }
  | { ok: false; reason: "no_credits" | "budget_busy"; retryAfterSeconds?: number };

/** What an isolate's flush says about its credit leases: those it gave up, and maybe a renewal (sized by `renewUnit`). */
export interface CreditFlushLeases {
  close: readonly LeaseClose[];
  renewUnit?: Pico;
}

/** One request's credit settlement. */
export interface CreditSettlement {
  reservationId: string | null;
  /** The credit-paid part of the request's cost. */
  credits: Pico;
  /**
   * The record that debits it in D1 (key outbox, LOGS queue): its id and the hour of its
   * `createdAt` (its key in `log_applied`). null: this object debits D1 itself.
   */
  log: { id: string; hour: number } | null;
}

interface Held {
  amount: Pico;
  at: number;
}

interface PendingDebit extends Held {
  hour: number;
}

export class OrgCredits extends DurableObject<Env> {
  private orgId: string | null = null;
  private balance: Pico | null = null;
  private readAt = 0;
  private reserved = 0n;
  private reservations = new Map<string, Held>();
  private pending = new Map<string, PendingDebit>();
  private pendingSum = 0n;
  /** Direct debits (no log row) not yet written to D1. */
  private unwritten = 0n;
  private next = 0;
  private reading: Promise<void> | null = null;
  private waiters = new AdmissionQueue<CreditGate>();
  /** The low-balance window (newest ledger entry time) already alerted for in this object's life. */
  private lowAlerted: number | null = null;
  /** The organization's low-balance threshold (null: off) and window as of the last read. */
  private lowThreshold: Pico | null = null;
  private lowWindow = 0;
  /** Credit slices granted to isolates (lease-book.ts); same rules as a key's. */
  private leases = new LeaseBook();

  /**
   * Reserves `estimate` of credits for a request (a true upper bound of its credit-paid cost).
   * Waits at most `waitMs` while only reservations exhaust the balance.
   */
  async reserve(orgId: string, estimate: Pico, opts: { waitMs?: number; lease?: boolean; close?: readonly LeaseClose[] } = {}): Promise<CreditGate> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    this.orgId = orgId;
    const now = Date.now();
    for (const c of opts.close ?? []) this.leases.close(c, now);
    if (opts.close?.length) this.waiters.pump();
    this.expire(now);
    if (this.balance === null || now - this.readAt > REFRESH_MS) await this.read();
    let verdict = this.verdict();
    if (verdict !== "admit" && now - this.readAt > RECHECK_MS) {
      // Refusals and waits are decided on fresh numbers (a top-up may have landed).
      await this.read();
      verdict = this.verdict();
    }
    const amount = estimate > 0n ? estimate : 0n;
    if (verdict === "refuse") return { ok: false, reason: "no_credits" };
    if (verdict === "admit" && this.waiters.length === 0) {
      const slice = opts.lease ? this.leaseSlice(amount) : null;
      if (slice === null) return this.hold(amount);
      const lease = this.leases.grant(slice, Date.now());
      return { ok: true, reservationId: leaseReservationId(lease.leaseId, amount), lease };
    }
    const waitMs = Math.max(0, opts.waitMs ?? 0);
    const busy = (): CreditGate => ({ ok: false, reason: "budget_busy", retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
    if (waitMs === 0) return busy();
    return this.waiters.wait(
      () => {
        const v = this.verdict();
        return v === "wait" ? "wait" : v === "refuse" ? { ok: false, reason: "no_credits" } : this.hold(amount);
      },
      waitMs,
      busy,
    );
  }

  /**
   * Releases reservations and records the credits of finished requests (several at once). With
   * `leases`: the credit leases the isolate gave up and, with `renewUnit` (its lease nears its end;
   * src/billing/settle.ts), the next lease when the balance allows one (the rules of `reserve`,
   * without a request).
   */
  async settleMany(orgId: string, items: readonly CreditSettlement[], leases: CreditFlushLeases | null = null): Promise<{ lease: LeaseGrant } | null> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    this.orgId = orgId;
    const now = Date.now();
    for (const i of items) {
      if (i.reservationId) this.release(i.reservationId);
      if (i.credits <= 0n) continue;
      if (i.log) {
        this.pending.set(i.log.id, { amount: i.credits, at: now, hour: i.log.hour });
        this.pendingSum += i.credits;
      } else {
        this.unwritten += i.credits;
      }
    }
    for (const c of leases?.close ?? []) this.leases.close(c, now);
    this.waiters.pump();
    // Written before returning: a debit only in memory would be lost with the object.
    while (this.unwritten > 0n) await this.read();
    // The spend that takes the balance below the threshold alerts now, not at the next read (up to
    // REFRESH_MS later); settings and window as last read (a ledger entry re-reads them at once).
    if (this.balance !== null) this.checkLowBalance(orgId);
    return leases?.renewUnit !== undefined ? this.renewLease(leases.renewUnit, now) : null;
  }

  private async renewLease(unit: Pico, now: number): Promise<{ lease: LeaseGrant } | null> {
    this.expire(now);
    if (this.balance === null || now - this.readAt > REFRESH_MS) await this.read();
    if (this.verdict() !== "admit" || this.waiters.length > 0) return null;
    const slice = this.leaseSlice(unit);
    return slice === null ? null : { lease: this.leases.grant(slice, Date.now()) };
  }

  /** Re-reads the balance now (a ledger entry changed it) and lets waiting requests in. */
  async refresh(orgId: string): Promise<void> {
    this.orgId = orgId;
    await this.read();
  }

  /** The balance as admission sees it (tests and diagnostics). */
  async view(orgId: string): Promise<{ balance: Pico | null; pending: Pico; reserved: Pico; unwritten: Pico }> {
    this.orgId = orgId;
    return { balance: this.balance, pending: this.pendingSum, reserved: this.reserved + this.leases.held(Date.now()), unwritten: this.unwritten };
  }

  // ---------- internals ----------

  private settled(): Pico {
    return (this.balance ?? 0n) - this.pendingSum - this.unwritten;
  }

  private verdict(): "admit" | "wait" | "refuse" {
    const settled = this.settled();
    if (settled <= 0n) return "refuse";
    return settled - this.reserved - this.leases.held(Date.now()) > 0n ? "admit" : "wait";
  }

  /** A slice of what is left, or null (per-request admission) when that is worth few requests. */
  private leaseSlice(estimate: Pico): Pico | null {
    const available = this.settled() - this.reserved - this.leases.held(Date.now());
    const unit = estimate > 0n ? estimate : 1n;
    return available >= LEASE_MIN_REQUESTS * unit ? available / LEASE_SLICE_DIVISOR : null;
  }

  private hold(amount: Pico): CreditGate {
    const reservationId = `${Date.now().toString(36)}-${(this.next++).toString(36)}`;
    this.reservations.set(reservationId, { amount, at: Date.now() });
    this.reserved += amount;
    return { ok: true, reservationId };
  }

  private release(id: string): void {
    if (this.leases.release(id)) return;
    const r = this.reservations.get(id);
    if (!r) return;
    this.reservations.delete(id);
    this.reserved -= r.amount;
  }

  private expire(now: number): void {
    for (const [id, r] of this.reservations) if (now - r.at > RESERVATION_TTL_MS) this.release(id);
    for (const [id, p] of this.pending) {
      if (now - p.at <= PENDING_TTL_MS) continue;
      this.pending.delete(id);
      this.pendingSum -= p.amount;
    }
  }

  /** One D1 batch (one snapshot): write direct debits, read the balance, find pending rows now stored. */
  private read(): Promise<void> {
    this.reading ??= this.readOnce().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    const orgId = this.orgId;
    if (!orgId) return;
    const debit = this.unwritten;
    // (hour, id) pairs as one bound JSON value (never a bind list that grows).
    const pairs = JSON.stringify([...this.pending].map(([id, p]) => [p.hour, id]));
    const db = this.env.DB;
    const statements: D1PreparedStatement[] = [];
    if (debit > 0n) statements.push(db.prepare("UPDATE organizations SET credits_pico = credits_pico - CAST(? AS INTEGER) WHERE id = ?").bind(debit.toString(), orgId));
    statements.push(
      db
        .prepare("SELECT CAST(credits_pico AS TEXT) AS c, notifications AS n, (SELECT MAX(created_at) FROM credit_ledger WHERE organization_id = ?1 AND amount_pico > 0) AS w FROM organizations WHERE id = ?1")
        .bind(orgId),
    );
    statements.push(
      db.prepare("SELECT a.id FROM json_each(?) j JOIN log_applied a ON a.hour_start = json_extract(j.value, '$[0]') AND a.id = json_extract(j.value, '$[1]')").bind(pairs),
    );
    const results = await db.batch(statements);
    this.unwritten -= debit;
    const balanceRow = results[statements.length - 2]?.results[0] as { c?: string; n?: string | null; w?: number | null } | undefined;
    this.balance = balanceRow?.c ? BigInt(balanceRow.c) : 0n;
    this.readAt = Date.now();
    for (const row of (results[statements.length - 1]?.results ?? []) as Array<{ id: string }>) {
      const p = this.pending.get(row.id);
      if (!p) continue;
      this.pending.delete(row.id);
      this.pendingSum -= p.amount;
    }
    this.waiters.pump();
    this.lowThreshold = thresholdOf(balanceRow?.n ?? null);
    this.lowWindow = balanceRow?.w ?? 0;
    this.checkLowBalance(orgId);
  }

  /**
   * Alerts once per window when the settled balance is below the organization's threshold (its
   * own, else the default; off the admission path). The window is the newest top-up, so each fall
   * below the threshold alerts once, however many requests follow it.
   */
  private checkLowBalance(orgId: string): void {
    const { lowThreshold: threshold, lowWindow: windowStart } = this;
    if (this.lowAlerted === windowStart) return;
    const balance = this.settled();
    if (threshold === null || balance >= threshold) return;
    this.lowAlerted = windowStart;
    this.ctx.waitUntil(
      alertLowCredits(this.env, orgId, balance, threshold, windowStart).catch((err: unknown) => {
        this.lowAlerted = null;
        console.error("low credit alert failed", err instanceof Error ? err.message : String(err));
      }),
    );
  }
}

/** The threshold in an organization's notification settings (JSON as D1 holds it): its own, else the default; null when off or unreadable. */
function thresholdOf(settingsJson: string | null): Pico | null {
  try {
    return lowCreditsThresholdPico(settingsJson ? (JSON.parse(settingsJson) as NotificationSettings | null)?.lowCreditsThreshold : undefined);
  } catch {
    return null;
  }
}

export function orgCreditsStub(env: Env, orgId: string) {
  countDoCall();
  return env.ORG_CREDITS.get(env.ORG_CREDITS.idFromName(orgId));
}

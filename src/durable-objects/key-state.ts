/**
 * KeyState: one Durable Object per gateway key (idFromName(keyId)). It is the single, global
 * authority on whether a key may be used right now:
 *  - liveness: current secret fingerprint, status, expiry, and the key's `version` (bumped by
 *    every admin change so isolates know when their cached KeyContext is stale);
 *  - spend: all-time and recurring-window usage, with reservations so that concurrent requests
 *    cannot overshoot a limit by more than one request's cost.
 *
 * Hot path: in steady state no call at all (isolates admit under a lease, docs/admission.md);
 * else one, `admit` (spending requests) or `check` (others). Settlements and lease renewals come
 * together after responses (`flush`), off the hot path. Admin paths `sync` after writing D1 and
 * before returning, which is what makes disable/roll/delete/limit changes immediate everywhere.
 * Admission rules, waiting and invariants: docs/admission.md.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { Pico } from "../billing/money";
import {
  flushDelayMs,
  outboxMessages,
  sendRetryMs,
  createOutbox,
  OUTBOX_BATCH,
  sameSpend,
  spendReportStatement,
  type OutboxEntry,
  type OutboxRow,
  type OutboxSpendRow,
  type PersistedSpend,
} from "./key-outbox";
import { sendLogMessages } from "../usage/log-queue";
import { AdmissionQueue } from "./admission-queue";
import { LeaseBook, leaseReservationId } from "./lease-book";
import { simulatedLatency } from "./debug-latency";
import { firstApplication } from "./applied-ids";
import { busy, crossedThresholds, hasPeriod, leaseSlice, liveness, rollWindow, spendVerdict, startWindow } from "./key-gate";
import type { AdmitOptions, FlushLeases, FlushResult, GateResult, KeySnapshot, SettleResult, Settlement, SpendState } from "./key-state-types";

export {
  snapshotOf,
  type AdmitOptions,
  type DenialReason,
  type FlushLeases,
  type FlushResult,
  type GateResult,
  type KeySnapshot,
  type SettleResult,
  type Settlement,
  type SnapshotSource,
  type SpendState,
} from "./key-state-types";

interface Reservation {
  amount: Pico;
  at: number;
}

/** Reservations older than this are assumed lost (isolate died before settling) and released. */
const RESERVATION_TTL_MS = 15 * 60 * 1000;

export class KeyState extends DurableObject<Env> {
  private snapshot: KeySnapshot | null = null;
  private spend: SpendState = { usage: 0n, periodUsage: 0n, periodStartedAt: null, reserved: 0n };
  private reservations = new Map<string, Reservation>();
  private loaded = false;
  private nextReservation = 0;
  private flushScheduled = false;
  /** Version of `spend`, persisted with it (kv and outbox rows). */
  private spendSeq = 0;
  /** The spend last written to D1's `key_spend` (kv "reported"); null: unknown, report the next. */
  private reported: PersistedSpend | null = null;
  /** Requests waiting for in-flight reservations to settle, in order of arrival. */
  private waiters = new AdmissionQueue<GateResult>();
  /** Budget slices granted to isolates (lease-book.ts). */
  private leases = new LeaseBook();
  /** Consecutive failed sends of the outbox (backoff). */
  private sendFailures = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Settled requests waiting for the LOGS queue, each stored pre-serialized (a flush sends it as is).
    createOutbox(ctx.storage);
  }

  /**
   * Synchronous storage (SQLite-backed DO): reads and writes are local and need no await. Spend is
   * the newer of kv's copy and the last outbox row's.
   */
  private load(): void {
    if (this.loaded) return;
    this.snapshot = this.ctx.storage.kv.get<KeySnapshot>("snapshot") ?? null;
    const stored = this.ctx.storage.kv.get<PersistedSpend>("spend");
    let spend: PersistedSpend | undefined = stored;
    const last = this.ctx.storage.sql
      .exec<OutboxSpendRow>("SELECT spend_seq, usage, period_usage, period_started_at FROM outbox WHERE spend_seq IS NOT NULL ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    if (last && last.spend_seq > (stored?.seq ?? 0)) {
      spend = { usage: BigInt(last.usage), periodUsage: BigInt(last.period_usage), periodStartedAt: last.period_started_at, seq: last.spend_seq };
    }
    if (spend) {
      this.spend = { usage: spend.usage, periodUsage: spend.periodUsage, periodStartedAt: spend.periodStartedAt, reserved: 0n };
      this.spendSeq = spend.seq ?? 0;
    }
    // A new object (nothing stored) starts at zero, which key creation wrote to D1 already; an
    // object with spend but no report predates key_spend and reports at its next change.
    this.reported = this.ctx.storage.kv.get<PersistedSpend>("reported") ?? null;
    if (!this.reported && !spend) this.markReported({ usage: 0n, periodUsage: 0n, periodStartedAt: null, seq: 0 });
    this.loaded = true;
    // Records stored before a restart (the runtime died before their flush) leave with the next
    // flush, whatever became of the alarm that was due to send them; the consumer applies each once.
    if (last) this.scheduleFlush(Date.now()).catch((err: unknown) => console.error("outbox flush after restart not scheduled", err instanceof Error ? err.message : String(err)));
  }

  /**
   * Writes spend to kv (changes that come without an outbox row), and has the alarm report it to
   * D1 when the figures moved (images, moderations, refunds, a recurring limit removed).
   */
  private storeSpend(): void {
    this.spendSeq++;
    const spend = this.persistedSpend();
    this.ctx.storage.kv.put("spend", spend);
    if (!sameSpend(this.reported, spend)) {
      this.scheduleFlush(Date.now()).catch((err: unknown) => console.error("key spend report not scheduled", err instanceof Error ? err.message : String(err)));
    }
  }

  /** The outbox flush (`alarm`) in LOG_FLUSH_MS, unless one is due already. */
  private async scheduleFlush(now: number): Promise<void> {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    await this.ctx.storage.setAlarm(now + flushDelayMs(this.env));
  }

  /** The `key_spend` row of the current spend (null before the object knows its key). */
  private spendReport(now: number): { statement: D1PreparedStatement; spend: PersistedSpend } | null {
    const keyId = this.snapshot?.keyId;
    if (!keyId) return null;
    const spend = this.persistedSpend();
    return { statement: spendReportStatement(this.env, keyId, spend, now), spend };
  }

  private markReported(spend: PersistedSpend): void {
    if (this.reported && (this.reported.seq ?? 0) > (spend.seq ?? 0)) return;
    this.reported = spend;
    this.ctx.storage.kv.put("reported", spend);
  }

  /** Admin path: store the key's current attributes. Versions only move forward. */
  async sync(next: KeySnapshot): Promise<void> {
    this.syncSnapshot(next);
    // Returns only once every lease granted under the previous state has expired: from then on,
    // every isolate asks this object again and sees the change.
    const wait = this.leases.latestExpiry() - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait + 1));
  }

  private syncSnapshot(next: KeySnapshot): void {
    this.load();
    if (this.snapshot && this.snapshot.version > next.version) return;
    this.snapshot = next;
    // Spend and the running window survive every sync (roll, rename, limit changes): only clearing
    // the recurring limit ends the window; a later limit starts a fresh one at first use.
    if (!hasPeriod(next)) {
      this.spend.periodStartedAt = null;
      this.spend.periodUsage = 0n;
    }
    this.ctx.storage.kv.put("snapshot", next);
    this.storeSpend();
    // A disabled/rolled key refuses its waiters; a raised limit admits them.
    this.pump();
  }

  /**
   * Liveness only, for requests that spend nothing (models, analytics). `spending`: also refuse
   * when settled spend reached a limit (no reservation, no waiting).
   */
  async check(fingerprint: string, fallback: KeySnapshot, now = Date.now(), opts: { spending?: boolean } = {}): Promise<GateResult> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    this.ensureSnapshot(fallback);
    const denial = this.liveness(fingerprint, now);
    if (denial) return denial;
    if (opts.spending) {
      this.rollWindow(now);
      const verdict = this.spendVerdict(now);
      if (verdict !== "wait" && verdict !== "admit") return verdict;
    }
    return { ok: true, version: this.snapshot!.version, reservationId: null };
  }

  /**
   * Liveness plus spend admission (docs/admission.md). A request is refused (401) only when the
   * SETTLED spend reached a limit. It is admitted while spend + reservations stays below every
   * limit, and then reserves `estimate` (a true upper bound of its cost), so the overshoot is
   * bounded by one request's actual cost. When only reservations exhaust the budget it waits, in
   * order of arrival, for settlements (at most `waitMs`), then is admitted or refused on real
   * numbers; past the bound it gets `budget_busy` (429), never the limit-reached 401.
   */
  async admit(fingerprint: string, fallback: KeySnapshot, estimate: Pico, now = Date.now(), opts: AdmitOptions = {}): Promise<GateResult> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    this.ensureSnapshot(fallback);
    for (const c of opts.close ?? []) this.leases.close(c, now);
    if (opts.close?.length) this.pump();
    const denial = this.liveness(fingerprint, now);
    if (denial) return denial;
    this.expireReservations(now);
    this.rollWindow(now);
    const amount = estimate > 0n ? estimate : 0n;
    const verdict = this.spendVerdict(now);
    if (verdict !== "wait" && verdict !== "admit") return verdict;
    // Free requests cannot overshoot; the others keep the order of arrival.
    if (amount === 0n || (verdict === "admit" && this.waiters.length === 0)) {
      const slice = opts.lease ? this.leaseSlice(amount, now) : "none";
      if (slice === "none") return this.reserve(amount, now);
      const lease = this.leases.grant(slice, now);
      return { ok: true, version: this.snapshot!.version, reservationId: leaseReservationId(lease.leaseId, amount), lease };
    }
    const waitMs = Math.max(0, opts.waitMs ?? 0);
    if (waitMs === 0) return this.busy(waitMs);
    return this.waiters.wait(
      () => {
        const t = Date.now();
        const v = this.liveness(fingerprint, t) ?? this.spendVerdict(t);
        return v === "admit" ? this.reserve(amount, t) : v;
      },
      waitMs,
      () => this.busy(waitMs),
    );
  }

  private reserve(amount: Pico, now: number): GateResult {
    const reservationId = `${now.toString(36)}-${(this.nextReservation++).toString(36)}`;
    this.reservations.set(reservationId, { amount, at: now });
    this.spend.reserved += amount;
    return { ok: true, version: this.snapshot!.version, reservationId };
  }

  private leaseSlice(estimate: Pico, now: number): Pico | null | "none" {
    return leaseSlice(this.snapshot!, this.spend, this.spend.reserved + this.leases.held(now), estimate);
  }

  /** Decides waiting requests after anything that changed spend, reservations or the key. */
  private pump(): void {
    if (this.snapshot) this.waiters.pump();
  }

  /** After the upstream call: replace the reservation with the real cost (0 for failures). */
  async settle(reservationId: string | null, actual: Pico, now = Date.now()): Promise<SettleResult> {
    const [result] = await this.settleMany([{ reservationId, actual }], now);
    return result!;
  }

  /**
   * Several settlements in one call (an isolate sends the requests that finished together): one
   * round trip and one storage transaction for all of them. Results are in the order of `items`.
   * With an `outbox` entry (the request's log row and credit debit), the entry and the new spend
   * are ONE row, so spend and log can never disagree; rows go to the LOGS queue in batches from
   * `alarm` (one send for many requests instead of one per request).
   */
  async settleMany(items: readonly Settlement[], now = Date.now()): Promise<SettleResult[]> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    return this.settleBatch(items, now);
  }

  /**
   * What a busy isolate sends about once per lease period, in one call: the settlements it queued
   * (`settleMany`) and, when its lease is near its end, the renewal, so it never waits for one.
   */
  async flush(items: readonly Settlement[], leases: FlushLeases, now = Date.now()): Promise<FlushResult> {
    const lag = simulatedLatency(this.env);
    if (lag) await lag;
    const fresh = items.length > 0 && (leases.id === undefined || firstApplication(this.ctx.storage, leases.id, now));
    const results = fresh ? await this.settleBatch(items, now) : [];
    for (const c of leases.close) this.leases.close(c, now);
    if (leases.close.length) this.pump();
    return { results, renewed: leases.renew ? this.renewLease(leases.renew, now) : null };
  }

  /** The next lease for an isolate whose current one still runs: the rules of `admit`, without a request. */
  private renewLease(r: NonNullable<FlushLeases["renew"]>, now: number): FlushResult["renewed"] {
    this.ensureSnapshot(r.fallback);
    if (this.liveness(r.fingerprint, now)) return null;
    this.expireReservations(now);
    this.rollWindow(now);
    if (this.spendVerdict(now) !== "admit" || this.waiters.length > 0) return null;
    const slice = this.leaseSlice(r.unit, now);
    return slice === "none" ? null : { lease: this.leases.grant(slice, now), version: this.snapshot!.version };
  }

  private async settleBatch(items: readonly Settlement[], now: number): Promise<SettleResult[]> {
    const results = items.map((i) => this.settleOne(i.reservationId, i.actual, now, i.outbox));
    this.pump();
    if (items.some((i) => i.outbox)) await this.scheduleFlush(now);
    return results;
  }

  private settleOne(reservationId: string | null, actual: Pico, now: number, outbox?: OutboxEntry): SettleResult {
    this.load();
    const before = { usage: this.spend.usage, periodUsage: this.spend.periodUsage };
    if (reservationId) this.release(reservationId);
    this.rollWindow(now);
    if (actual > 0n) {
      this.spend.usage += actual;
      if (this.snapshot && hasPeriod(this.snapshot)) {
        startWindow(this.spend, now);
        this.spend.periodUsage += actual;
      }
      if (!outbox) this.storeSpend();
    }
    if (outbox) {
      this.ctx.storage.sql.exec(
        "INSERT INTO outbox (log_id, org, credits, row, spend_seq, usage, period_usage, period_started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        outbox.logId,
        outbox.organizationId,
        outbox.creditsPico.toString(),
        outbox.row,
        ++this.spendSeq,
        this.spend.usage.toString(),
        this.spend.periodUsage.toString(),
        this.spend.periodStartedAt,
      );
    }
    return { crossed: crossedThresholds(this.snapshot, before, this.spend) };
  }

  /**
   * Sends the outbox to the LOGS queue (records with their credit debits; the consumer applies
   * each once), then reports the key's current settled spend to D1 (`key_spend`, what key lists
   * show). A failed send keeps the rows and tries again later; spend that changed without a log
   * row is reported alone.
   */
  override async alarm(): Promise<void> {
    this.flushScheduled = false;
    this.load();
    const now = Date.now();
    const rows = this.ctx.storage.sql.exec<OutboxRow>("SELECT seq, log_id, org, credits, row FROM outbox ORDER BY seq LIMIT ?", OUTBOX_BATCH).toArray();
    if (rows.length > 0) {
      try {
        await sendLogMessages(this.env, outboxMessages(rows));
        this.sendFailures = 0;
      } catch (err) {
        this.sendFailures++;
        console.error("log queue send failed; outbox kept", err instanceof Error ? err.message : String(err));
        return this.retryLater(now);
      }
      // The rows about to go held the latest spend: kv takes it over first (same transaction).
      this.ctx.storage.kv.put("spend", this.persistedSpend());
      // A crash between the send and this delete sends the rows again: the consumer skips records
      // it applied already (log_applied), so nothing is counted twice.
      this.ctx.storage.sql.exec("DELETE FROM outbox WHERE seq <= ?", rows[rows.length - 1]!.seq);
    }
    const report = rows.length > 0 || !sameSpend(this.reported, this.persistedSpend()) ? this.spendReport(now) : null;
    if (report) {
      try {
        await report.statement.run();
        this.markReported(report.spend);
      } catch (err) {
        this.sendFailures++;
        console.error("key spend report failed", err instanceof Error ? err.message : String(err));
        return this.retryLater(now);
      }
    }
    if (rows.length === OUTBOX_BATCH) {
      this.flushScheduled = true;
      await this.ctx.storage.setAlarm(Date.now());
    }
  }

  private async retryLater(now: number): Promise<void> {
    this.flushScheduled = true;
    await this.ctx.storage.setAlarm(now + sendRetryMs(this.sendFailures));
  }

  /** Settled requests not yet sent to the LOGS queue (tests and diagnostics). */
  async outboxSize(): Promise<number> {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }

  /**
   * Gives back spend that was charged for something never delivered (a video job that failed
   * after it was accepted). The recurring window is credited only when the charge fell in the
   * window that is still running.
   */
  async refund(amount: Pico, chargedAt: number, now = Date.now()): Promise<SpendState> {
    this.load();
    if (amount <= 0n) return { ...this.spend };
    this.rollWindow(now);
    // No clamping at 0: a refund can overtake its own charge (settled in waitUntil); they cancel out.
    this.spend.usage -= amount;
    if (this.spend.periodStartedAt !== null && chargedAt >= this.spend.periodStartedAt) this.spend.periodUsage -= amount;
    this.storeSpend();
    this.pump();
    return { ...this.spend };
  }

  /** Drops a reservation without spending (request refused after admission, e.g. by IAM). */
  async cancel(reservationId: string): Promise<void> {
    this.release(reservationId);
    this.pump();
  }

  /** Whether the snapshot carries a spending limit: a member budget with one counts the member's spend. */
  async limited(): Promise<boolean> {
    this.load();
    return this.snapshot !== null && (this.snapshot.usageLimit !== null || this.snapshot.periodUsageLimit !== null);
  }

  async getSpend(now = Date.now()): Promise<SpendState> {
    this.load();
    this.rollWindow(now);
    const leased = this.leases.held(now);
    return leased > 0n ? { ...this.spend, leased } : { ...this.spend };
  }

  /**
   * Writes the key's settled spend to D1 (`key_spend`) now and returns it: for a key listed
   * without a row there (created before key_spend existed, and unchanged since).
   */
  async publishSpend(fallback: KeySnapshot, now = Date.now()): Promise<SpendState> {
    this.ensureSnapshot(fallback);
    this.rollWindow(now);
    const report = this.spendReport(now);
    if (report) {
      await report.statement.run();
      this.markReported(report.spend);
    }
    return { ...this.spend };
  }

  // ---------- internals ----------

  private ensureSnapshot(fallback: KeySnapshot): void {
    this.load();
    // The DO normally learns a key at creation (sync). If it never did, the isolate's copy from D1 is the truth.
    if (!this.snapshot) this.syncSnapshot(fallback);
  }

  private liveness(fingerprint: string, now: number): GateResult | null {
    return liveness(this.snapshot!, fingerprint, now);
  }

  private spendVerdict(now: number): GateResult | "wait" | "admit" {
    return spendVerdict(this.snapshot!, this.spend, this.spend.reserved + this.leases.held(now), now);
  }

  private busy(waitMs: number): GateResult {
    return busy(this.snapshot!.version, waitMs);
  }

  private rollWindow(now: number): void {
    rollWindow(this.snapshot, this.spend, now);
  }

  private release(id: string): void {
    if (this.leases.release(id)) return;
    const r = this.reservations.get(id);
    if (!r) return;
    this.reservations.delete(id);
    this.spend.reserved -= r.amount;
  }

  private expireReservations(now: number): void {
    for (const [id, r] of this.reservations) if (now - r.at > RESERVATION_TTL_MS) this.release(id);
  }

  private persistedSpend(): PersistedSpend {
    return { usage: this.spend.usage, periodUsage: this.spend.periodUsage, periodStartedAt: this.spend.periodStartedAt, seq: this.spendSeq };
  }
}

// Importers reach the stub through here; the log queue imports its module directly (no circle).
export { keyStateStub } from "./key-state-stub";

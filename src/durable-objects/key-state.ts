/**
 * KeyState: one Durable Object per gateway key (idFromName(keyId)). It is the single, global
 * authority on whether a key may be used right now:
 *  - liveness: current secret fingerprint, status, expiry, and the key's `version` (bumped by
 *    every admin change so isolates know when their cached KeyContext is stale);
 *  - spend: all-time and recurring-window usage, with reservations so that concurrent requests
 *    cannot overshoot a limit by more than one request's cost.
 *
 * Hot path: exactly one call, `admit` (spending requests) or `check` (others). Settling the real
 * cost happens after the response, off the hot path. Admin paths `sync` after writing D1 and
 * before returning, which is what makes disable/roll/delete/limit changes immediate everywhere.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { KeyStatus, PeriodUnit } from "../db/schema";
import { parseUsd, type Pico } from "../billing/money";
import { timingSafeEqual } from "../lib/crypto";
import { addPeriod } from "../billing/period";
import { INSERT_LOG_IGNORE_SQL } from "../usage/request-log";

/** What the DO needs to know about a key; built from D1 rows by `snapshotOf`. */
export interface KeySnapshot {
  keyId: string;
  organizationId: string;
  fingerprint: string;
  status: KeyStatus;
  expiresAt: number | null;
  version: number;
  usageLimit: string | null;
  periodUsageLimit: string | null;
  periodUsageDurationValue: number | null;
  periodUsageDurationUnit: PeriodUnit | null;
}

/** The key attributes a snapshot is made of: D1 rows and cached KeyContexts both have them. */
export type SnapshotSource = Pick<KeySnapshot, "fingerprint" | "status" | "expiresAt" | "version" | "usageLimit" | "periodUsageLimit" | "periodUsageDurationValue" | "periodUsageDurationUnit"> & {
  id: string;
  organizationId: string;
};

export const snapshotOf = (k: SnapshotSource): KeySnapshot => ({
  keyId: k.id,
  organizationId: k.organizationId,
  fingerprint: k.fingerprint,
  status: k.status,
  expiresAt: k.expiresAt,
  version: k.version,
  usageLimit: k.usageLimit,
  periodUsageLimit: k.periodUsageLimit,
  periodUsageDurationValue: k.periodUsageDurationValue,
  periodUsageDurationUnit: k.periodUsageDurationUnit,
});

/** What a settled request still has to write to D1: its log row and the credit-paid part of its cost. */
export interface OutboxEntry {
  /** `request_logs` values in `REQUEST_LOG_COLUMNS` order. */
  logValues: Array<string | number | null>;
  organizationId: string;
  creditsPico: Pico;
}

const OUTBOX_PREFIX = "outbox:";
const OUTBOX_BATCH = 100;

/** How long settled requests may wait before their log rows reach D1. Override: LOG_FLUSH_MS. */
function flushDelayMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).LOG_FLUSH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 250;
}

function outboxStatements(env: Env, e: OutboxEntry): D1PreparedStatement[] {
  const out = [env.DB.prepare(INSERT_LOG_IGNORE_SQL).bind(...e.logValues)];
  // `changes()` is the number of rows the INSERT just above wrote: 0 when the row already existed.
  if (e.creditsPico > 0n) out.push(env.DB.prepare(DEBIT_IF_INSERTED_SQL).bind(e.creditsPico.toString(), e.organizationId));
  return out;
}

const DEBIT_IF_INSERTED_SQL = "UPDATE organizations SET credits_pico = credits_pico - CAST(? AS INTEGER) WHERE id = ? AND changes() > 0";

export type DenialReason =
  | "deleted"
  | "disabled"
  | "expired"
  | "rolled"
  | "usage_limit_reached"
  | "period_usage_limit_reached";

export type GateResult =
  | { ok: true; version: number; reservationId: string | null }
  | { ok: false; version: number; reason: DenialReason; message: string };

export interface SpendState {
  /** All-time spend in pico-dollars. */
  usage: Pico;
  /** Spend in the current recurring window. */
  periodUsage: Pico;
  /** Start of the current window (epoch ms), null before first use or without a recurring limit. */
  periodStartedAt: number | null;
  /** Cost reserved by requests in flight. */
  reserved: Pico;
}

export interface SettleResult {
  spend: SpendState;
  /** Limits whose threshold this settlement crossed (for budget alerts), with the window start. */
  crossed: Array<{ limit: "all_time" | "period"; windowStart: number; percentBefore: number; percent: number }>;
}

interface Reservation {
  amount: Pico;
  at: number;
}

/** Reservations older than this are assumed lost (isolate died before settling) and released. */
const RESERVATION_TTL_MS = 15 * 60 * 1000;

const DENIAL_MESSAGES: Record<Exclude<DenialReason, "usage_limit_reached" | "period_usage_limit_reached">, string> = {
  deleted: "This API key has been deleted.",
  disabled: "This API key is disabled.",
  expired: "This API key has expired.",
  rolled: "This API key secret was rolled; use the new secret.",
};

export class KeyState extends DurableObject<Env> {
  private snapshot: KeySnapshot | null = null;
  private spend: SpendState = { usage: 0n, periodUsage: 0n, periodStartedAt: null, reserved: 0n };
  private reservations = new Map<string, Reservation>();
  private loaded = false;
  private nextReservation = 0;
  private nextOutbox = 0;
  private flushScheduled = false;

  private async load(): Promise<void> {
    if (this.loaded) return;
    const [snapshot, spend] = await Promise.all([
      this.ctx.storage.get<KeySnapshot>("snapshot"),
      this.ctx.storage.get<Omit<SpendState, "reserved">>("spend"),
    ]);
    this.snapshot = snapshot ?? null;
    if (spend) this.spend = { ...spend, reserved: 0n };
    this.loaded = true;
  }

  /** Admin path: store the key's current attributes. Versions only move forward. */
  async sync(next: KeySnapshot): Promise<void> {
    await this.load();
    if (this.snapshot && this.snapshot.version > next.version) return;
    this.snapshot = next;
    // Spend and the running window survive every sync (roll, rename, limit changes): only clearing
    // the recurring limit ends the window; a later limit starts a fresh one at first use.
    if (!hasPeriod(next)) {
      this.spend.periodStartedAt = null;
      this.spend.periodUsage = 0n;
    }
    await this.ctx.storage.put({ snapshot: next, spend: this.persistedSpend() });
  }

  /** Liveness only, for requests that spend nothing (models, analytics). */
  async check(fingerprint: string, fallback: KeySnapshot, now = Date.now()): Promise<GateResult> {
    await this.ensureSnapshot(fallback);
    const denial = this.liveness(fingerprint, now);
    return denial ?? { ok: true, version: this.snapshot!.version, reservationId: null };
  }

  /**
   * Liveness plus spend admission. Admits while spend + reservations is below every limit, then
   * reserves `estimate`; so the overshoot is bounded by one request's estimate.
   */
  async admit(fingerprint: string, fallback: KeySnapshot, estimate: Pico, now = Date.now()): Promise<GateResult> {
    await this.ensureSnapshot(fallback);
    const denial = this.liveness(fingerprint, now);
    if (denial) return denial;
    const s = this.snapshot!;
    this.expireReservations(now);
    this.rollWindow(now);

    if (s.usageLimit !== null && this.spend.usage + this.spend.reserved >= parseUsd(s.usageLimit)) {
      return { ok: false, version: s.version, reason: "usage_limit_reached", message: `Usage limit reached: this key has spent its all-time limit of $${s.usageLimit}.` };
    }
    if (hasPeriod(s)) {
      this.startWindow(now);
      if (this.spend.periodUsage + this.spend.reserved >= parseUsd(s.periodUsageLimit)) {
        const resetsAt = new Date(addPeriod(this.spend.periodStartedAt ?? now, s.periodUsageDurationValue, s.periodUsageDurationUnit)).toISOString();
        return {
          ok: false,
          version: s.version,
          reason: "period_usage_limit_reached",
          message: `Usage limit reached: this key has spent its recurring limit of $${s.periodUsageLimit} per ${s.periodUsageDurationValue} ${s.periodUsageDurationUnit}(s); the window resets at ${resetsAt}.`,
        };
      }
    }
    const amount = estimate > 0n ? estimate : 0n;
    const reservationId = `${now.toString(36)}-${(this.nextReservation++).toString(36)}`;
    this.reservations.set(reservationId, { amount, at: now });
    this.spend.reserved += amount;
    return { ok: true, version: s.version, reservationId };
  }

  /** After the upstream call: replace the reservation with the real cost (0 for failures). */
  /**
   * After the upstream call: replace the reservation with the real cost (0 for failures). With an
   * `outbox` entry (the request's log row and credit debit), the entry is stored in the same
   * storage write as the new spend, so spend and log can never disagree, and reaches D1 in
   * batches from `alarm` (one D1 round trip for many requests instead of one per request).
   */
  async settle(reservationId: string | null, actual: Pico, now = Date.now(), outbox?: OutboxEntry): Promise<SettleResult> {
    await this.load();
    const before = { usage: this.spend.usage, periodUsage: this.spend.periodUsage };
    if (reservationId) this.release(reservationId);
    this.rollWindow(now);
    if (actual > 0n) {
      this.spend.usage += actual;
      if (this.snapshot && hasPeriod(this.snapshot)) {
        this.startWindow(now);
        this.spend.periodUsage += actual;
      }
    }
    const writes: Record<string, unknown> = {};
    if (actual > 0n) writes.spend = this.persistedSpend();
    if (outbox) writes[`${OUTBOX_PREFIX}${now.toString(36).padStart(10, "0")}:${(this.nextOutbox++).toString(36)}`] = outbox;
    if (Object.keys(writes).length) await this.ctx.storage.put(writes);
    if (outbox && !this.flushScheduled) {
      this.flushScheduled = true;
      await this.ctx.storage.setAlarm(now + flushDelayMs(this.env));
    }
    return { spend: { ...this.spend }, crossed: this.crossedThresholds(before) };
  }

  /** Flushes the outbox to D1: log rows (idempotent by id) and credit debits, in one batch. */
  override async alarm(): Promise<void> {
    this.flushScheduled = false;
    const entries = await this.ctx.storage.list<OutboxEntry>({ prefix: OUTBOX_PREFIX, limit: OUTBOX_BATCH });
    if (entries.size === 0) return;
    await this.env.DB.batch([...entries.values()].flatMap((e) => outboxStatements(this.env, e)));
    // A crash between the batch and this delete replays the batch: rows are INSERT OR IGNORE and a
    // debit applies only when its row was inserted, so nothing is counted twice.
    await this.ctx.storage.delete([...entries.keys()]);
    if (entries.size === OUTBOX_BATCH) {
      this.flushScheduled = true;
      await this.ctx.storage.setAlarm(Date.now());
    }
  }

  /** Drops a reservation without spending (request refused after admission, e.g. by IAM). */
  async cancel(reservationId: string): Promise<void> {
    this.release(reservationId);
  }

  async getSpend(now = Date.now()): Promise<SpendState> {
    await this.load();
    this.rollWindow(now);
    return { ...this.spend };
  }

  // ---------- internals ----------

  private async ensureSnapshot(fallback: KeySnapshot): Promise<void> {
    await this.load();
    // The DO normally learns a key at creation (sync). If it never did, the isolate's copy from D1 is the truth.
    if (!this.snapshot) await this.sync(fallback);
  }

  private liveness(fingerprint: string, now: number): GateResult | null {
    const s = this.snapshot!;
    const deny = (reason: keyof typeof DENIAL_MESSAGES): GateResult => ({ ok: false, version: s.version, reason, message: DENIAL_MESSAGES[reason] });
    if (s.status === "deleted") return deny("deleted");
    if (!timingSafeEqual(fingerprint, s.fingerprint)) return deny("rolled");
    if (s.expiresAt !== null && s.expiresAt <= now) return deny("expired");
    if (s.status !== "active") return deny("disabled");
    return null;
  }

  private release(id: string): void {
    const r = this.reservations.get(id);
    if (!r) return;
    this.reservations.delete(id);
    this.spend.reserved -= r.amount;
  }

  private expireReservations(now: number): void {
    for (const [id, r] of this.reservations) if (now - r.at > RESERVATION_TTL_MS) this.release(id);
  }

  /** The first use with no running window starts one, with nothing spent in it yet. */
  private startWindow(now: number): void {
    if (this.spend.periodStartedAt !== null) return;
    this.spend.periodStartedAt = now;
    this.spend.periodUsage = 0n;
  }

  /** A window ends after its duration; the next starts at the first use after that. */
  private rollWindow(now: number): void {
    const s = this.snapshot;
    if (!s?.periodUsageDurationUnit || !s.periodUsageDurationValue || this.spend.periodStartedAt === null) return;
    if (addPeriod(this.spend.periodStartedAt, s.periodUsageDurationValue, s.periodUsageDurationUnit) <= now) {
      this.spend.periodStartedAt = null;
      this.spend.periodUsage = 0n;
    }
  }

  /** Limits whose spend percentage moved in this settlement; the alert module applies the threshold. */
  private crossedThresholds(before: { usage: Pico; periodUsage: Pico }): SettleResult["crossed"] {
    const s = this.snapshot;
    if (!s) return [];
    const pct = (v: Pico, limit: Pico) => (limit > 0n ? Number((v * 10000n) / limit) / 100 : 0);
    const out: SettleResult["crossed"] = [];
    if (s.usageLimit) {
      const limit = parseUsd(s.usageLimit);
      out.push({ limit: "all_time", windowStart: 0, percentBefore: pct(before.usage, limit), percent: pct(this.spend.usage, limit) });
    }
    if (s.periodUsageLimit && this.spend.periodStartedAt !== null) {
      const limit = parseUsd(s.periodUsageLimit);
      out.push({ limit: "period", windowStart: this.spend.periodStartedAt, percentBefore: pct(before.periodUsage, limit), percent: pct(this.spend.periodUsage, limit) });
    }
    return out.filter((c) => c.percent !== c.percentBefore);
  }

  private persistedSpend(): Omit<SpendState, "reserved"> {
    return { usage: this.spend.usage, periodUsage: this.spend.periodUsage, periodStartedAt: this.spend.periodStartedAt };
  }
}

type PeriodSnapshot = KeySnapshot & { periodUsageLimit: string; periodUsageDurationValue: number; periodUsageDurationUnit: PeriodUnit };

const hasPeriod = (s: KeySnapshot): s is PeriodSnapshot =>
  s.periodUsageLimit !== null && s.periodUsageDurationUnit !== null && s.periodUsageDurationValue !== null && s.periodUsageDurationValue > 0;

/** Stub for a key's DO. idFromName hashes the name; keep the ids of recently used keys (they are plain values). */
const ids = new Map<string, DurableObjectId>();

export function keyStateStub(env: Env, keyId: string) {
  let id = ids.get(keyId);
  if (!id) {
    if (ids.size >= 10_000) ids.clear();
    id = env.KEY_STATE.idFromName(keyId);
    ids.set(keyId, id);
  }
  return env.KEY_STATE.get(id);
}


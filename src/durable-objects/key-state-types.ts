/**
 * What callers exchange with the KeyState object (src/durable-objects/key-state.ts): the key's
 * snapshot, admission answers, spend, settlements and lease flushes. Kept apart from the object so
 * it stays one concept per file; key-state.ts re-exports all of it.
 */
import type { KeyStatus, PeriodUnit } from "../db/schema";
import type { Pico } from "../billing/money";
import type { OutboxEntry } from "./key-outbox";
import type { LeaseClose, LeaseGrant } from "./lease-book";

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

export type DenialReason =
  | "deleted"
  | "disabled"
  | "expired"
  | "rolled"
  | "usage_limit_reached"
  | "period_usage_limit_reached"
  /** Not a refusal of the key: in-flight reservations held the budget for longer than the wait bound. */
  | "budget_busy";

export type GateResult =
  | { ok: true; version: number; reservationId: string | null; lease?: LeaseGrant }
  | { ok: false; version: number; reason: DenialReason; message: string; retryAfterSeconds?: number };

/** How admission waits when in-flight reservations, not spend, exhaust the budget. */
export interface AdmitOptions {
  /** Longest wait in order of arrival before the 429 (ms); 0 answers at once. */
  waitMs?: number;
  /** Grant the calling isolate a lease when the budget allows it (the request is admitted under it). */
  lease?: boolean;
  /** Leases the isolate stopped using, with what it admitted under them. */
  close?: readonly LeaseClose[];
}

export interface SpendState {
  /** All-time spend in pico-dollars. */
  usage: Pico;
  /** Spend in the current recurring window. */
  periodUsage: Pico;
  /** Start of the current window (epoch ms), null before first use or without a recurring limit. */
  periodStartedAt: number | null;
  /** Cost reserved by requests in flight with their own reservation (not under a lease). */
  reserved: Pico;
  /** Budget held by isolates' leases (docs/admission.md); absent when none. */
  leased?: Pico;
}

/** One request's settlement: its reservation, real cost and (chat) outbox entry. */
export interface Settlement {
  reservationId: string | null;
  actual: Pico;
  outbox?: OutboxEntry;
}

/** What an isolate's flush says about its leases: those it gave up, and maybe a renewal. */
export interface FlushLeases {
  /** Leases the isolate gave up (replaced, or expired), with what it admitted under them. */
  close: readonly LeaseClose[];
  /** Ask for the next lease: its current one is near its end. */
  renew?: { fingerprint: string; fallback: KeySnapshot; unit: Pico };
  /** The settlements' id: a flush resent under an id the object applied already is not applied again (applied-ids.ts). */
  id?: string;
}

export interface FlushResult {
  results: SettleResult[];
  /** The next lease, or null (not asked, near the limit, key not usable: the isolate then asks per request). */
  renewed: { lease: LeaseGrant; version: number } | null;
}

export interface SettleResult {
  /** Limits whose threshold this settlement crossed (for budget alerts), with the window start. */
  crossed: Array<{ limit: "all_time" | "period"; windowStart: number; percentBefore: number; percent: number }>;
}

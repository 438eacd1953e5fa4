/**
 * Credits after bootstrap: operator top-ups and corrections, the ledger the
 * owner reads (the low-balance e-mail is in ./low-credits.ts).
 *
 * An entry and its change to `organizations.credits_pico` are one D1 batch (one transaction): the
 * ledger row is inserted unless its idempotency key is taken, and the balance moves only when THIS
 * attempt's row exists, so the same key sent twice (or concurrently) adds once. The organization's
 * OrgCredits object is then told to re-read the balance, so a drained organization is served on
 * its next request (docs/admission.md).
 */
import { and, desc, eq, sql } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { creditLedger, organizations, type CreditSource } from "../db/schema";
import { ApiError, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { orgCreditsStub } from "../durable-objects/org-credits";
import { formatUsd, isDecimalString, parseUsd, picoFromDb } from "./money";
import { effectiveLowCreditsThreshold } from "./low-credits";

/** One entry moves at most this much (stays an exact JS number of pico-dollars). */
const MAX_ENTRY_USD = "9000";

export const creditEntryBody = z.object({
  amount: z
    .string()
    .refine(isDecimalString, 'must be a decimal string, e.g. "25.00" (negative for a correction)')
    .refine((v) => !isDecimalString(v) || parseUsd(v) !== 0n, "must not be zero")
    .refine((v) => !isDecimalString(v) || (parseUsd(v) <= parseUsd(MAX_ENTRY_USD) && parseUsd(v) >= -parseUsd(MAX_ENTRY_USD)), `must be between -${MAX_ENTRY_USD} and ${MAX_ENTRY_USD} USD`),
  reason: z.string().trim().min(1).max(500),
  idempotencyKey: z.string().trim().min(1).max(128),
});

export type CreditEntryInput = z.infer<typeof creditEntryBody>;

type LedgerRow = { id: string; amountPico: string; balanceAfterPico: string | null; reason: string; source: CreditSource; idempotencyKey: string | null; createdAt: number };

const ledgerColumns = {
  id: creditLedger.id,
  amountPico: sql<string>`CAST(${creditLedger.amountPico} AS TEXT)`,
  balanceAfterPico: sql<string | null>`CAST(${creditLedger.balanceAfterPico} AS TEXT)`,
  reason: creditLedger.reason,
  source: creditLedger.source,
  idempotencyKey: creditLedger.idempotencyKey,
  createdAt: creditLedger.createdAt,
};

export function publicLedgerEntry(r: LedgerRow) {
  return {
    id: r.id,
    object: "credit_entry" as const,
    amount: formatUsd(picoFromDb(r.amountPico)),
    balanceAfter: r.balanceAfterPico === null ? null : formatUsd(picoFromDb(r.balanceAfterPico)),
    reason: r.reason,
    source: r.source,
    idempotencyKey: r.idempotencyKey,
    createdAt: new Date(r.createdAt).toISOString(),
  };
}

export type PublicLedgerEntry = ReturnType<typeof publicLedgerEntry>;

/**
 * Adds `amount` (negative: a correction) to the organization's credits, once per idempotency key.
 * `created` is false when the key was already used (same amount: the stored entry; another
 * amount: 409 `idempotency_key_reused`).
 */
export async function addCreditEntry(env: Env, organizationId: string, input: CreditEntryInput, source: CreditSource = "admin") {
  const db = getDb(env.DB);
  const org = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, organizationId)).get();
  if (!org) throw notFound("Organization not found.", "organization_not_found");
  const amount = parseUsd(input.amount);
  const id = newId("cred");
  await db.batch([
    db
      .insert(creditLedger)
      .values({ id, organizationId, amountPico: Number(amount), reason: input.reason, source, idempotencyKey: input.idempotencyKey, createdAt: Date.now() })
      .onConflictDoNothing(),
    db
      .update(organizations)
      .set({ creditsPico: sql`${organizations.creditsPico} + CAST(${amount.toString()} AS INTEGER)` })
      .where(and(eq(organizations.id, organizationId), sql`EXISTS (SELECT 1 FROM ${creditLedger} WHERE ${creditLedger.id} = ${id})`)),
    db
      .update(creditLedger)
      .set({ balanceAfterPico: sql`(SELECT ${organizations.creditsPico} FROM ${organizations} WHERE ${organizations.id} = ${organizationId})` })
      .where(eq(creditLedger.id, id)),
  ]);
  const row = await db
    .select(ledgerColumns)
    .from(creditLedger)
    .where(and(eq(creditLedger.organizationId, organizationId), eq(creditLedger.idempotencyKey, input.idempotencyKey)))
    .get();
  if (!row) throw new Error("credit entry missing after insert");
  const created = row.id === id;
  if (!created && picoFromDb(row.amountPico) !== amount) {
    throw new ApiError(409, `Idempotency key '${input.idempotencyKey}' was already used for an entry of ${formatUsd(picoFromDb(row.amountPico))} USD; use a new key for a new entry.`, {
      type: "invalid_request_error",
      code: "idempotency_key_reused",
      param: "idempotencyKey",
    });
  }
  // The organization's admission object re-reads the balance now (a drained org is served at once).
  if (created) await orgCreditsStub(env, organizationId).refresh(organizationId);
  return { entry: publicLedgerEntry(row), created };
}

/** The balance (D1) and the newest ledger entries. */
export async function creditLedgerView(env: Env, organizationId: string, limit = 100) {
  const db = getDb(env.DB);
  const [org, rows] = await Promise.all([
    db
      .select({ credits: sql<string>`CAST(${organizations.creditsPico} AS TEXT)`, notifications: organizations.notifications })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .get(),
    db
      .select(ledgerColumns)
      .from(creditLedger)
      .where(eq(creditLedger.organizationId, organizationId))
      .orderBy(desc(creditLedger.createdAt), desc(creditLedger.id))
      .limit(limit),
  ]);
  if (!org) throw notFound("Organization not found.", "organization_not_found");
  return {
    balance: formatUsd(picoFromDb(org.credits)),
    lowCreditsThreshold: effectiveLowCreditsThreshold(org.notifications.lowCreditsThreshold),
    entries: rows.map(publicLedgerEntry),
  };
}

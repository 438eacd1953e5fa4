/** The organization's credit ledger. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { organizations } from "./organizations";

export const CREDIT_SOURCES = ["bootstrap", "admin"] as const;
export type CreditSource = (typeof CREDIT_SOURCES)[number];

/**
 * Credit ledger: every credit added to or taken off an organization other
 * than usage (usage is in `request_logs`). `amount_pico` is signed (a correction is negative);
 * `balance_after_pico` is the D1 balance right after the entry. An idempotency key is used once
 * per organization: the same key again is the same entry (src/billing/credit-ledger.ts).
 */
export const creditLedger = sqliteTable("credit_ledger", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  amountPico: integer("amount_pico", { mode: "number" }).notNull(),
  balanceAfterPico: integer("balance_after_pico", { mode: "number" }),
  reason: text("reason").notNull(),
  source: text("source", { enum: CREDIT_SOURCES }).notNull(),
  idempotencyKey: text("idempotency_key"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("credit_ledger_idempotency_uq").on(t.organizationId, t.idempotencyKey),
  index("credit_ledger_org_created_idx").on(t.organizationId, t.createdAt),
]);

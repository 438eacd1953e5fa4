/** Values the columns take (enums), the JSON columns' types, and shared column builders. (Part of the D1 schema: ../schema.ts.) */
import { sql } from "drizzle-orm";
import { integer } from "drizzle-orm/sqlite-core";

export const PLANS = ["free", "pro", "enterprise"] as const;
export const ROLES = ["owner", "admin", "developer"] as const;
export const PROJECT_MODES = ["credits", "api-keys", "hybrid"] as const;
/** `session`: a short-lived end-user session minted with a platform secret key (src/platform/). */
export const KEY_KINDS = ["standard", "coding-plan", "playground", "session"] as const;
export const KEY_STATUSES = ["active", "inactive", "deleted"] as const;
export const PERIOD_UNITS = ["hour", "day", "week", "month"] as const;
export const RULE_LEVELS = ["key", "member", "team"] as const;
export const RULE_TYPES = [
  "allow_models",
  "deny_models",
  "allow_providers",
  "deny_providers",
  "allow_pricing",
  "deny_pricing",
  "allow_ip_cidrs",
  "deny_ip_cidrs",
  "allow_regions",
  "deny_regions",
] as const;

export type Plan = (typeof PLANS)[number];
export type Role = (typeof ROLES)[number];
export type ProjectMode = (typeof PROJECT_MODES)[number];
export type KeyKind = (typeof KEY_KINDS)[number];
export type KeyStatus = (typeof KEY_STATUSES)[number];
export type PeriodUnit = (typeof PERIOD_UNITS)[number];
export type RuleLevel = (typeof RULE_LEVELS)[number];
export type RuleType = (typeof RULE_TYPES)[number];

export interface CompliancePolicy {
  /** Only provider mappings whose provider does not train on API data. */
  noTraining?: boolean;
  deniedProviders?: string[];
  /**
   * No upstream call starts before the key's current rules are confirmed by its object (no early
   * call under rules this isolate may hold from before a change; docs/admission.md).
   */
  strictPolicy?: boolean;
  /** Stored request and response bodies have e-mail addresses, phone and card numbers masked. */
  redactBodies?: boolean;
  /** Residency: only endpoints in these regions or continents (`eu-central-1`, `EU`); global endpoints excluded. */
  regions?: string[];
}

export interface NotificationSettings {
  apiKeyBudgets?: boolean;
  /** 50..100, default 80. */
  thresholdPercent?: number;
  /** Owners get an e-mail (and `credits.low` webhooks an event) when the credit balance falls below this (decimal USD); unset: the default (src/billing/low-credits.ts); "0": off. */
  lowCreditsThreshold?: string;
}

export interface RuleValue {
  /** As the caller sent them (shown back); matching uses `canonicalModels`. */
  models?: string[];
  /** Internal: `models` resolved at creation (src/iam/model-refs.ts). Never returned by the API. */
  canonicalModels?: string[];
  providers?: string[];
  pricingType?: "free" | "paid";
  ipCidrs?: string[];
  /** Regions (`eu-central-1`) or continent codes (`EU`) of `allow_regions` / `deny_regions`. */
  regions?: string[];
}

/** `created_at` in epoch ms, set by D1 on insert. */
export const createdAt = () => integer("created_at", { mode: "number" }).notNull().default(sql`(unixepoch() * 1000)`);

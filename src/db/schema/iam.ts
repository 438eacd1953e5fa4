/** IAM rules (key, member and team level). (Part of the D1 schema: ../schema.ts.) */
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { RULE_LEVELS, RULE_TYPES, createdAt, type RuleValue } from "./columns";
import { organizations } from "./organizations";

export const iamRules = sqliteTable("iam_rules", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  level: text("level", { enum: RULE_LEVELS }).notNull(),
  /** api key id, member id or team id depending on `level`. */
  targetId: text("target_id").notNull(),
  ruleType: text("rule_type", { enum: RULE_TYPES }).notNull(),
  ruleValue: text("rule_value", { mode: "json" }).$type<RuleValue>().notNull(),
  status: text("status", { enum: ["active", "inactive"] }).notNull().default("active"),
  createdAt: createdAt(),
}, (t) => [index("iam_rules_target_idx").on(t.level, t.targetId), index("iam_rules_org_idx").on(t.organizationId)]);

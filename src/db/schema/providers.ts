/** The organization's provider keys (BYOK), custom providers and custom models. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { organizations } from "./organizations";

/** The organization's own upstream credentials (BYOK). Token encrypted with AES-GCM. */
export const providerKeys = sqliteTable("provider_keys", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  provider: text("provider").notNull(),
  label: text("label"),
  baseUrl: text("base_url"),
  tokenCiphertext: text("token_ciphertext").notNull(),
  tokenHint: text("token_hint").notNull(),
  /** Share of the provider's requests this key takes, relative to the others' weights. */
  weight: integer("weight", { mode: "number" }).notNull().default(1),
  /** The region whose endpoint this key serves (src/routing/endpoints.ts); null: every endpoint. */
  region: text("region"),
  createdAt: createdAt(),
}, (t) => [index("provider_keys_org_provider_idx").on(t.organizationId, t.provider)]);

/** OpenAI-compatible upstreams of one organization, addressed as `<name>/<model>`. */
export const customProviders = sqliteTable("custom_providers", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  baseUrl: text("base_url").notNull(),
  tokenCiphertext: text("token_ciphertext").notNull(),
  tokenHint: text("token_hint").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("custom_providers_org_name_uq").on(t.organizationId, t.name)]);

export interface CustomModelPricing {
  prompt?: string;
  completion?: string;
  request?: string;
  input_cache_read?: string;
}

export interface CustomModelCapabilities {
  streaming?: boolean;
  tools?: boolean;
  vision?: boolean;
  reasoning?: boolean;
  json_output?: boolean;
}

export const customModels = sqliteTable("custom_models", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  providerName: text("provider_name").notNull(),
  modelId: text("model_id").notNull(),
  name: text("name"),
  pricing: text("pricing", { mode: "json" }).$type<CustomModelPricing>().notNull().default({}),
  contextLength: integer("context_length", { mode: "number" }),
  capabilities: text("capabilities", { mode: "json" }).$type<CustomModelCapabilities>().notNull().default({}),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("custom_models_org_provider_model_uq").on(t.organizationId, t.providerName, t.modelId)]);

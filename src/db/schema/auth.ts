/** Dashboard sessions, OAuth clients and grants (MCP), and single sign-on per organization. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { organizations, users, members } from "./organizations";

/** Dashboard sessions; the cookie holds the raw token, this table its keyed fingerprint. */
export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull(),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  memberId: text("member_id").notNull().references(() => members.id, { onDelete: "cascade" }),
  csrfToken: text("csrf_token").notNull(),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  /** `sso`: opened by an organization's identity provider, good for that organization only. */
  signInMethod: text("sign_in_method", { enum: ["password", "sso"] }).notNull().default("password"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("sessions_token_uq").on(t.tokenHash)]);

export const oauthClients = sqliteTable("oauth_clients", {
  id: text("id").primaryKey(),
  /** SHA-256 of the client secret; null for public clients (PKCE only). */
  secretHash: text("secret_hash"),
  name: text("name").notNull(),
  redirectUris: text("redirect_uris", { mode: "json" }).$type<string[]>().notNull().default([]),
  grantTypes: text("grant_types", { mode: "json" }).$type<string[]>().notNull().default([]),
  /** For client-credentials clients: the gateway key the client acts as. */
  apiKeyId: text("api_key_id"),
  createdAt: createdAt(),
}, (t) => [index("oauth_clients_api_key_idx").on(t.apiKeyId)]);

export const oauthGrants = sqliteTable("oauth_grants", {
  id: text("id").primaryKey(),
  /** `code`, `access` or `refresh`; the token itself is never stored, only its SHA-256. */
  kind: text("kind", { enum: ["code", "access", "refresh"] }).notNull(),
  tokenHash: text("token_hash").notNull(),
  clientId: text("client_id").notNull().references(() => oauthClients.id, { onDelete: "cascade" }),
  apiKeyId: text("api_key_id").notNull(),
  scope: text("scope"),
  redirectUri: text("redirect_uri"),
  codeChallenge: text("code_challenge"),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  revokedAt: integer("revoked_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("oauth_grants_token_uq").on(t.tokenHash),
  index("oauth_grants_client_idx").on(t.clientId),
  // Rolling, disabling or deleting a key revokes its grants (src/oauth/tokens.ts endKeyOAuth).
  index("oauth_grants_api_key_idx").on(t.apiKeyId),
]);

/**
 * OpenID Connect sign-in of one organization (src/sso/). The client secret is sealed
 * (`encryptSecret`) and never shown again; `allowedDomains` are lower-case e-mail domains.
 */
export const organizationSso = sqliteTable("organization_sso", {
  organizationId: text("organization_id").primaryKey().references(() => organizations.id, { onDelete: "cascade" }),
  issuer: text("issuer").notNull(),
  clientId: text("client_id").notNull(),
  clientSecretEncrypted: text("client_secret_encrypted").notNull(),
  clientSecretHint: text("client_secret_hint").notNull(),
  allowedDomains: text("allowed_domains", { mode: "json" }).$type<string[]>().notNull(),
  defaultRole: text("default_role", { enum: ["developer", "admin"] }).notNull(),
  required: integer("required", { mode: "boolean" }).notNull().default(false),
  /** The one owner who may still sign in with a password when SSO is required. */
  breakGlassMemberId: text("break_glass_member_id"),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});

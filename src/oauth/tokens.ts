/**
 * OAuth 2.0 grants of the MCP server (spec 4.4): authorization codes, access tokens and refresh
 * tokens, all rows of `oauth_grants`. Only a token's keyed fingerprint is stored (HMAC-SHA-256 with
 * KEY_HASH_SECRET; rows from before it hold the plain SHA-256 and are rewritten at their next use:
 * src/lib/secret-hash.ts).
 *
 * Formats (contract section 2: opaque, never a gateway key's secret):
 *   code `swbo_ac_<40>`, access token `swbo_at_<40>`, refresh token `swbo_rt_<40>`.
 *
 * Families: every grant row id is `oag_<family>_<random>`. A code and every access/refresh token
 * that descends from it (through exchange and refresh rotation) share the family, so replaying a
 * used code or a rotated refresh token, or revoking a refresh token (RFC 7009 2.1), revokes the
 * whole family without an extra column.
 *
 * `resolveAccessToken` caches positive answers per isolate for at most ACCESS_CACHE_TTL_MS (5 s):
 * a revocation made by another isolate takes effect within 5 s; one made in this isolate
 * (`revokeToken`, rotation, `endKeyOAuth`) evicts the entry immediately. Expiry is always checked
 * exactly.
 */
import { and, eq, gt, inArray, isNull, like, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, oauthClients, oauthGrants } from "../db/schema";
import { candidates, secretHashes, type SecretHashes } from "../lib/secret-hash";
import { requireHashSecret } from "../lib/crypto";
import { randomAlphanumeric } from "../lib/ids";

export const ACCESS_TOKEN_PREFIX = "swbo_at_";
export const REFRESH_TOKEN_PREFIX = "swbo_rt_";
export const CODE_PREFIX = "swbo_ac_";
const TOKEN_BODY_LENGTH = 40;

export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
export const CODE_TTL_MS = 10 * 60 * 1000;
export const ACCESS_CACHE_TTL_MS = 5_000;

const TOKEN_RE = /^swbo_(at|rt|ac)_[A-Za-z0-9]{40}$/;
export const looksLikeOAuthToken = (s: string): boolean => TOKEN_RE.test(s);
export const looksLikeAccessToken = (s: string): boolean => s.startsWith(ACCESS_TOKEN_PREFIX) && TOKEN_RE.test(s);

const hashesOf = (env: Env, token: string): Promise<SecretHashes> => secretHashes(requireHashSecret(env), token);
const stored = (env: Env, token: string): Promise<string> => hashesOf(env, token).then((h) => h.keyed);
/** The row of a token, by its keyed fingerprint or (a row from before it) its legacy SHA-256. */
const tokenIs = (h: SecretHashes) => inArray(oauthGrants.tokenHash, candidates(h));

/** A row found by its legacy hash is stored the keyed way from now on (at most once per row). */
async function upgradeHash(env: Env, id: string, found: string, h: SecretHashes): Promise<void> {
  if (found === h.keyed) return;
  await getDb(env.DB).update(oauthGrants).set({ tokenHash: h.keyed }).where(and(eq(oauthGrants.id, id), eq(oauthGrants.tokenHash, h.legacy)));
}

export interface AccessTokenInfo {
  apiKeyId: string;
  clientId: string;
  scope: string | null;
  expiresAt: number;
}

type GrantKind = "code" | "access" | "refresh";
type GrantRow = typeof oauthGrants.$inferSelect;

// ---------- families ----------

const newFamily = (): string => randomAlphanumeric(20);
const grantId = (family: string): string => `oag_${family}_${randomAlphanumeric(12)}`;

/** The family of a grant row id (`oag_<family>_<rand>`), or null for foreign ids. */
export function familyOf(id: string): string | null {
  const m = /^oag_([A-Za-z0-9]{20})_[A-Za-z0-9]+$/.exec(id);
  return m?.[1] ?? null;
}

// ---------- isolate cache ----------

const cache = new Map<string, { info: AccessTokenInfo; cachedAt: number }>();
const MAX_CACHE = 2000;

function cachePut(hash: string, info: AccessTokenInfo, now: number): void {
  if (cache.size >= MAX_CACHE) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(hash, { info, cachedAt: now });
}

/** Tests only. */
export function clearAccessTokenCache(): void {
  cache.clear();
}

// ---------- issuing ----------

export interface IssuedTokens {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

interface GrantBase {
  clientId: string;
  apiKeyId: string;
  scope: string | null;
}

/** Stores a new authorization code (single use, 10 minutes). Returns the raw code. */
export async function createAuthorizationCode(
  env: Env,
  input: GrantBase & { redirectUri: string; codeChallenge: string },
  now = Date.now(),
): Promise<string> {
  const code = CODE_PREFIX + randomAlphanumeric(TOKEN_BODY_LENGTH);
  await getDb(env.DB)
    .insert(oauthGrants)
    .values({
      id: grantId(newFamily()),
      kind: "code",
      tokenHash: await stored(env, code),
      clientId: input.clientId,
      apiKeyId: input.apiKeyId,
      scope: input.scope,
      redirectUri: input.redirectUri,
      codeChallenge: input.codeChallenge,
      expiresAt: now + CODE_TTL_MS,
      createdAt: now,
    });
  return code;
}

/** Issues an access token, plus a refresh token unless `refresh` is false (client credentials). */
export async function issueTokens(
  env: Env,
  input: GrantBase & { family?: string; refresh: boolean },
  now = Date.now(),
): Promise<IssuedTokens> {
  const family = input.family ?? newFamily();
  const access = ACCESS_TOKEN_PREFIX + randomAlphanumeric(TOKEN_BODY_LENGTH);
  const db = getDb(env.DB);
  const row = (kind: GrantKind, tokenHash: string, ttl: number) =>
    db.insert(oauthGrants).values({
      id: grantId(family),
      kind,
      tokenHash,
      clientId: input.clientId,
      apiKeyId: input.apiKeyId,
      scope: input.scope,
      expiresAt: now + ttl,
      createdAt: now,
    });
  const out: IssuedTokens = { access_token: access, token_type: "Bearer", expires_in: Math.floor(ACCESS_TOKEN_TTL_MS / 1000) };
  if (input.scope) out.scope = input.scope;
  if (input.refresh) {
    const refresh = REFRESH_TOKEN_PREFIX + randomAlphanumeric(TOKEN_BODY_LENGTH);
    await db.batch([row("access", await stored(env, access), ACCESS_TOKEN_TTL_MS), row("refresh", await stored(env, refresh), REFRESH_TOKEN_TTL_MS)]);
    out.refresh_token = refresh;
  } else {
    await row("access", await stored(env, access), ACCESS_TOKEN_TTL_MS);
  }
  return out;
}

// ---------- consuming (single use) ----------

/**
 * The live code or refresh token without using it up, so the client and PKCE checks run before
 * anything is consumed (whoever holds a code cannot burn it with a wrong client_id or verifier).
 * Null for unknown, used, revoked or expired tokens: `consumeGrant` then reports which.
 */
export async function peekGrant(env: Env, kind: "code" | "refresh", token: string, now = Date.now()): Promise<GrantRow | null> {
  const prefix = kind === "code" ? CODE_PREFIX : REFRESH_TOKEN_PREFIX;
  if (!token.startsWith(prefix) || !TOKEN_RE.test(token)) return null;
  const row = await getDb(env.DB)
    .select()
    .from(oauthGrants)
    .where(and(tokenIs(await hashesOf(env, token)), eq(oauthGrants.kind, kind), isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, now)))
    .get();
  return row ?? null;
}

export type ConsumeResult =
  | { ok: true; grant: GrantRow; family: string }
  /** Unknown, expired, or already used (a replay: the family was revoked). */
  | { ok: false; replayed: boolean };

/**
 * Atomically marks a live code or refresh token as used (one UPDATE ... RETURNING, so two
 * concurrent exchanges cannot both succeed). A token that exists but was already used is a
 * replay: its whole family is revoked (RFC 6749 10.5; refresh rotation reuse detection), but only
 * when `clientId`, the authenticated client presenting it, is the client it was issued to.
 * Another client learns nothing from it and cannot end the legitimate client's tokens by
 * presenting a code or refresh token it saw (a log, a referrer) after its use.
 */
export async function consumeGrant(env: Env, kind: "code" | "refresh", token: string, clientId: string, now = Date.now()): Promise<ConsumeResult> {
  const prefix = kind === "code" ? CODE_PREFIX : REFRESH_TOKEN_PREFIX;
  if (!token.startsWith(prefix) || !TOKEN_RE.test(token)) return { ok: false, replayed: false };
  const db = getDb(env.DB);
  const h = await hashesOf(env, token);
  // Used up and (a row from before keyed fingerprints) stored the keyed way, in one statement.
  const rows = await db
    .update(oauthGrants)
    .set({ revokedAt: now, tokenHash: h.keyed })
    .where(and(tokenIs(h), eq(oauthGrants.kind, kind), isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, now)))
    .returning();
  const grant = rows[0];
  if (grant) {
    const family = familyOf(grant.id) ?? newFamily();
    return { ok: true, grant, family };
  }
  const used = await db
    .select({ id: oauthGrants.id, revokedAt: oauthGrants.revokedAt, clientId: oauthGrants.clientId })
    .from(oauthGrants)
    .where(and(tokenIs(h), eq(oauthGrants.kind, kind)))
    .get();
  if (used && used.revokedAt !== null && used.clientId === clientId) {
    const family = familyOf(used.id);
    if (family) await revokeFamily(env, family, now);
    return { ok: false, replayed: true };
  }
  return { ok: false, replayed: false };
}

// ---------- resolving ----------

/**
 * The grant behind an access token: null for unknown, expired or revoked tokens (and for
 * anything that is not a `swbo_at_` token, e.g. a gateway key). See the header for caching.
 */
export async function resolveAccessToken(env: Env, token: string, now = Date.now()): Promise<AccessTokenInfo | null> {
  if (!looksLikeAccessToken(token)) return null;
  const h = await hashesOf(env, token);
  const hash = h.keyed;
  const hit = cache.get(hash);
  if (hit) {
    if (now - hit.cachedAt <= ACCESS_CACHE_TTL_MS && hit.info.expiresAt > now) return hit.info;
    cache.delete(hash);
  }
  const row = await getDb(env.DB)
    .select({
      id: oauthGrants.id,
      tokenHash: oauthGrants.tokenHash,
      apiKeyId: oauthGrants.apiKeyId,
      clientId: oauthGrants.clientId,
      scope: oauthGrants.scope,
      expiresAt: oauthGrants.expiresAt,
      revokedAt: oauthGrants.revokedAt,
    })
    .from(oauthGrants)
    .where(and(tokenIs(h), eq(oauthGrants.kind, "access")))
    .get();
  if (!row || row.revokedAt !== null || row.expiresAt <= now) return null;
  await upgradeHash(env, row.id, row.tokenHash, h);
  const info: AccessTokenInfo = { apiKeyId: row.apiKeyId, clientId: row.clientId, scope: row.scope, expiresAt: row.expiresAt };
  cachePut(hash, info, now);
  return info;
}

// ---------- revoking ----------

/** Revokes every live grant of a family (code, access and refresh tokens). */
export async function revokeFamily(env: Env, family: string, now = Date.now()): Promise<void> {
  const revoked = await getDb(env.DB)
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(like(oauthGrants.id, `oag_${family}_%`), isNull(oauthGrants.revokedAt)))
    .returning({ tokenHash: oauthGrants.tokenHash });
  for (const r of revoked) cache.delete(r.tokenHash);
}

/**
 * RFC 7009: revokes an access or refresh token of `clientId`. Revoking a refresh token also
 * revokes the access tokens of the same grant (its family). Unknown tokens, or tokens of another
 * client, are ignored (the endpoint answers 200 either way).
 */
export async function revokeToken(env: Env, clientId: string, token: string, now = Date.now()): Promise<void> {
  if (!looksLikeOAuthToken(token)) return;
  const h = await hashesOf(env, token);
  const row = await getDb(env.DB)
    .select({ id: oauthGrants.id, kind: oauthGrants.kind, clientId: oauthGrants.clientId })
    .from(oauthGrants)
    .where(tokenIs(h))
    .get();
  if (!row || row.clientId !== clientId) return;
  cache.delete(h.keyed);
  const family = familyOf(row.id);
  if (row.kind === "refresh" && family) {
    await revokeFamily(env, family, now);
    return;
  }
  await getDb(env.DB)
    .update(oauthGrants)
    .set({ revokedAt: sql`coalesce(${oauthGrants.revokedAt}, ${now})` })
    .where(eq(oauthGrants.id, row.id));
}

/** Which gateway keys `endKeyOAuth` ends: one key, or every key of a project. */
export type KeySelector = { keyId: string } | { projectId: string };

/**
 * Rolling, disabling or deleting a gateway key ends its OAuth access: every live grant
 * issued for the key (codes, access and refresh tokens, whatever the client) is revoked, and the
 * `client_credentials` clients registered with the key are deleted (with their grants), so they
 * can mint no new token. The key's holder registers a new client with the new secret; an MCP
 * client of the authorization_code flow signs in again. One batch; keys are picked by a
 * subquery, never a bound list.
 */
export async function endKeyOAuth(env: Env, keys: KeySelector, now = Date.now()): Promise<void> {
  const db = getDb(env.DB);
  const ofKeys = (column: typeof oauthGrants.apiKeyId | typeof oauthClients.apiKeyId) =>
    "keyId" in keys ? eq(column, keys.keyId) : inArray(column, db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.projectId, keys.projectId)));
  const [revoked] = await db.batch([
    db
      .update(oauthGrants)
      .set({ revokedAt: now })
      .where(and(ofKeys(oauthGrants.apiKeyId), isNull(oauthGrants.revokedAt)))
      .returning({ tokenHash: oauthGrants.tokenHash }),
    db.delete(oauthClients).where(ofKeys(oauthClients.apiKeyId)),
  ]);
  for (const r of revoked) cache.delete(r.tokenHash);
}

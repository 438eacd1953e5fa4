/**
 * OAuth clients: dynamic registration (RFC 7591) and client authentication at the token and
 * revocation endpoints (RFC 6749 2.3: `client_secret_basic`, `client_secret_post`, or `none` for
 * public PKCE clients). Only the SHA-256 of a client secret is stored.
 *
 * A client registered for `client_credentials` is bound to the gateway key that authenticated
 * its registration (`Authorization: Bearer swb_...`): its tokens act as that key.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { oauthClients } from "../db/schema";
import { timingSafeEqual } from "../lib/crypto";
import { secretHashes } from "../lib/secret-hash";
import { newId, randomAlphanumeric } from "../lib/ids";
import { checkKey, authenticateGatewayKey, requireHashSecret, type PresentedKey } from "../auth/gateway-key";
import { ApiError } from "../errors/api-error";
import { isRecord } from "../providers/json";
import { OAuthError } from "./errors";

export type ClientRow = typeof oauthClients.$inferSelect;
export const CLIENT_SECRET_PREFIX = "swbo_cs_";

const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"] as const;
const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
type AuthMethod = (typeof AUTH_METHODS)[number];
const MAX_REDIRECT_URIS = 10;

/** https anywhere, or http on a loopback host (RFC 8252 7.3); no fragments, no credentials. */
export function isAllowedRedirectUri(value: string): boolean {
  if (value.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

export interface RegistrationResult {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: AuthMethod;
  scope?: string;
}

/**
 * RFC 7591 registration. `presented` is the request's bearer credential and client IP (needed for
 * client_credentials: the key authenticates as on every other door, IP rules included).
 */
export async function registerClient(env: Env, metadata: unknown, presented: PresentedKey): Promise<RegistrationResult> {
  if (!isRecord(metadata)) throw new OAuthError(400, "invalid_client_metadata", "The body must be a JSON object of client metadata.");
  const grantTypes = metadata.grant_types ?? ["authorization_code", "refresh_token"];
  if (!stringArray(grantTypes) || grantTypes.length === 0 || grantTypes.some((g) => !(GRANT_TYPES as readonly string[]).includes(g))) {
    throw new OAuthError(400, "invalid_client_metadata", `grant_types must be a non-empty subset of ${GRANT_TYPES.join(", ")}.`);
  }
  const method = metadata.token_endpoint_auth_method ?? "client_secret_basic";
  if (typeof method !== "string" || !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw new OAuthError(400, "invalid_client_metadata", `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}.`);
  }
  const authMethod = method as AuthMethod;
  const redirectUris = metadata.redirect_uris ?? [];
  if (!stringArray(redirectUris) || redirectUris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError(400, "invalid_redirect_uri", `redirect_uris must be an array of at most ${MAX_REDIRECT_URIS} URLs.`);
  }
  const usesCode = grantTypes.includes("authorization_code");
  if (usesCode && redirectUris.length === 0) throw new OAuthError(400, "invalid_redirect_uri", "redirect_uris is required for the authorization_code grant.");
  for (const uri of redirectUris) {
    if (!isAllowedRedirectUri(uri)) {
      throw new OAuthError(400, "invalid_redirect_uri", `Redirect URI '${uri.slice(0, 200)}' must use https, or http on localhost / 127.0.0.1, and have no fragment.`);
    }
  }
  const responseTypes = metadata.response_types ?? (usesCode ? ["code"] : []);
  if (!stringArray(responseTypes) || responseTypes.some((r) => r !== "code") || (usesCode && !responseTypes.includes("code"))) {
    throw new OAuthError(400, "invalid_client_metadata", "response_types may only contain 'code'.");
  }
  const name = metadata.client_name ?? "Unnamed client";
  if (typeof name !== "string" || name.length > 200) throw new OAuthError(400, "invalid_client_metadata", "client_name must be a string of at most 200 characters.");
  const scope = typeof metadata.scope === "string" ? metadata.scope.slice(0, 500) : undefined;

  let apiKeyId: string | null = null;
  if (grantTypes.includes("client_credentials")) {
    if (authMethod === "none") throw new OAuthError(400, "invalid_client_metadata", "client_credentials clients must authenticate (client_secret_basic or client_secret_post).");
    if (!presented.secret) {
      throw new OAuthError(401, "invalid_client", "Registering a client_credentials client requires 'Authorization: Bearer <gateway key>'; the client will act as that key.");
    }
    try {
      const ctx = await checkKey(env, await authenticateGatewayKey(env, presented));
      apiKeyId = ctx.key.id;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw new OAuthError(401, "invalid_client", err.message);
      throw err;
    }
  }

  const clientId = newId("oac");
  const secret = authMethod === "none" ? null : CLIENT_SECRET_PREFIX + randomAlphanumeric(40);
  const now = Date.now();
  await getDb(env.DB)
    .insert(oauthClients)
    .values({ id: clientId, secretHash: secret ? (await secretHashes(requireHashSecret(env), secret)).keyed : null, name, redirectUris, grantTypes, apiKeyId, createdAt: now });
  const out: RegistrationResult = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: authMethod,
  };
  if (secret) {
    out.client_secret = secret;
    out.client_secret_expires_at = 0;
  }
  if (scope) out.scope = scope;
  return out;
}

export async function findClient(env: Env, clientId: string): Promise<ClientRow | null> {
  if (!/^oac_[A-Za-z0-9]{20}$/.test(clientId)) return null;
  return (await getDb(env.DB).select().from(oauthClients).where(eq(oauthClients.id, clientId)).get()) ?? null;
}

function parseBasic(header: string): { id: string; secret: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m?.[1]) return null;
  let decoded: string;
  try {
    decoded = atob(m[1]);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  // RFC 6749 2.3.1: both parts are form-urlencoded before being joined.
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " ")) };
  } catch {
    return null;
  }
}

/**
 * Authenticates the client of a token/revocation request. Confidential clients must present
 * their secret (Basic or post); public clients identify themselves with `client_id` only.
 */
export async function authenticateClient(env: Env, authorization: string | undefined, form: Record<string, string>): Promise<ClientRow> {
  const basic = authorization && /^Basic\s/i.test(authorization) ? parseBasic(authorization) : null;
  if (authorization && /^Basic\s/i.test(authorization) && !basic) throw new OAuthError(401, "invalid_client", "Malformed HTTP Basic credentials.", true);
  const clientId = basic?.id ?? form.client_id;
  const secret = basic?.secret ?? form.client_secret;
  if (!clientId) throw new OAuthError(401, "invalid_client", "Client authentication is required (client_id).", Boolean(basic));
  if (basic && form.client_id && form.client_id !== basic.id) throw new OAuthError(400, "invalid_request", "client_id does not match the Basic credentials.");
  const client = await findClient(env, clientId);
  if (!client) throw new OAuthError(401, "invalid_client", "Unknown client.", Boolean(basic));
  if (client.secretHash) {
    const hashes = secret ? await secretHashes(requireHashSecret(env), secret) : null;
    if (!hashes) throw new OAuthError(401, "invalid_client", "Invalid client credentials.", Boolean(basic));
    const keyed = timingSafeEqual(hashes.keyed, client.secretHash);
    // A client registered before keyed fingerprints: its secret's plain SHA-256, rewritten now.
    if (!keyed && !timingSafeEqual(hashes.legacy, client.secretHash)) throw new OAuthError(401, "invalid_client", "Invalid client credentials.", Boolean(basic));
    if (!keyed) {
      await getDb(env.DB).update(oauthClients).set({ secretHash: hashes.keyed }).where(and(eq(oauthClients.id, client.id), eq(oauthClients.secretHash, hashes.legacy)));
      return { ...client, secretHash: hashes.keyed };
    }
  } else if (secret) {
    throw new OAuthError(401, "invalid_client", "This is a public client; it has no secret.", Boolean(basic));
  }
  return client;
}

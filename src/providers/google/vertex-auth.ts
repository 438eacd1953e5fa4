/**
 * Vertex AI credentials. The `google-vertex` key (operator `GOOGLE_VERTEX_API_KEY` or an
 * organization's provider key) may be:
 *  - a service-account key file (the JSON Google Cloud downloads): exchanged for a one-hour OAuth
 *    access token with a signed JWT (RS256, scope cloud-platform), cached per isolate until five
 *    minutes before it expires, keyed on a digest of the whole key file and its owner;
 *  - a Google API key (`AIza...`, Vertex AI express mode): sent as `x-goog-api-key`;
 *  - anything else: an OAuth access token, sent as is (`Authorization: Bearer`).
 * The token endpoint is Google's; only the operator can point it elsewhere
 * (`GOOGLE_VERTEX_TOKEN_URL`, for local stand-ins), never the key file, so a key cannot make the
 * gateway call an address of its choosing.
 */
import type { UpstreamTarget } from "../types";
import { base64Url, fromBase64, sha256Hex } from "../../lib/crypto";

const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const TOKEN_LIFETIME_S = 3600;
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** The key file, when the credential is one (`"type": "service_account"`). */
function parseServiceAccount(secret: string): ServiceAccountKey | null {
  if (!secret.trimStart().startsWith("{")) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(secret);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const o = parsed as Record<string, unknown>;
  if (o.type !== "service_account" || typeof o.client_email !== "string" || typeof o.private_key !== "string") return null;
  return { client_email: o.client_email, private_key: o.private_key, ...(typeof o.private_key_id === "string" ? { private_key_id: o.private_key_id } : {}) };
}

const API_KEY = /^AIza[0-9A-Za-z_-]{35}$/;

export async function vertexAuthHeaders(target: UpstreamTarget): Promise<Record<string, string>> {
  const account = parseServiceAccount(target.apiKey);
  if (account) {
    const tokenUrl = target.settings.GOOGLE_VERTEX_TOKEN_URL ?? GOOGLE_TOKEN_URL;
    // Caches are keyed on the whole key file and its owner: a forged file that copies another
    // organization's client_email and key id never shares that organization's token or key.
    const cacheId = await sha256Hex(`${target.credentialOwner ?? "unknown"}\n${tokenUrl}\n${target.apiKey}`);
    return { authorization: `Bearer ${await accessToken(account, tokenUrl, cacheId)}` };
  }
  if (API_KEY.test(target.apiKey)) return { "x-goog-api-key": target.apiKey };
  return { authorization: `Bearer ${target.apiKey}` };
}

// ---------- service-account tokens ----------

const encoder = new TextEncoder();

const pemToDer = (pem: string): Uint8Array => fromBase64(pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, ""));

/** Imported signing keys by credential digest (importKey is the slow part; it is not request I/O). */
const signingKeys = new Map<string, Promise<CryptoKey>>();

function signingKey(account: ServiceAccountKey, id: string): Promise<CryptoKey> {
  let key = signingKeys.get(id);
  if (!key) {
    if (signingKeys.size >= 100) signingKeys.clear();
    key = crypto.subtle.importKey("pkcs8", pemToDer(account.private_key), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
    key.catch(() => signingKeys.delete(id));
    signingKeys.set(id, key);
  }
  return key;
}

/** The signed JWT assertion of the OAuth 2.0 JWT bearer grant (RFC 7523), as Google specifies it. */
async function signedAssertion(account: ServiceAccountKey, audience: string, cacheId: string, nowMs = Date.now()): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: "RS256", typ: "JWT", ...(account.private_key_id ? { kid: account.private_key_id } : {}) };
  const claims = { iss: account.client_email, scope: SCOPE, aud: audience, iat, exp: iat + TOKEN_LIFETIME_S };
  const input = `${base64Url(encoder.encode(JSON.stringify(header)))}.${base64Url(encoder.encode(JSON.stringify(claims)))}`;
  let key: CryptoKey;
  try {
    key = await signingKey(account, cacheId);
  } catch {
    throw new Error("the service-account key file's private_key is not a PKCS#8 RSA key");
  }
  const signature = new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, encoder.encode(input)));
  return `${input}.${base64Url(signature)}`;
}

/**
 * Tokens by credential digest (owner + token endpoint + whole key file). Only finished tokens are shared between requests (a request
 * never waits on another request's I/O); concurrent first requests each fetch one.
 */
const tokens = new Map<string, { token: string; refreshAt: number }>();

async function accessToken(account: ServiceAccountKey, tokenUrl: string, id: string): Promise<string> {
  const cached = tokens.get(id);
  if (cached && cached.refreshAt > Date.now()) return cached.token;

  const res = await fetch(tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await signedAssertion(account, tokenUrl, id) }),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: reported below by status
  }
  if (!res.ok || typeof body.access_token !== "string") {
    const reason = typeof body.error_description === "string" ? body.error_description : typeof body.error === "string" ? body.error : `HTTP ${res.status}`;
    throw new Error(`Vertex AI service-account token exchange for ${account.client_email} failed: ${reason}`);
  }
  const lifetimeMs = (typeof body.expires_in === "number" ? body.expires_in : TOKEN_LIFETIME_S) * 1000;
  if (tokens.size >= 100) tokens.clear();
  tokens.set(id, { token: body.access_token, refreshAt: Date.now() + Math.max(0, lifetimeMs - REFRESH_MARGIN_MS) });
  return body.access_token;
}

/**
 * Secrets: generation, HMAC fingerprints, constant-time comparison and AES-GCM encryption at rest.
 * Imported CryptoKeys are cached per isolate (importKey is the slow part).
 */
import type { Env } from "../env";
import { ApiError } from "../errors/api-error";
import { randomAlphanumeric } from "./ids";

const encoder = new TextEncoder();

export const GATEWAY_KEY_PREFIX = "swb_";
export const MASTER_KEY_PREFIX = "swbm_";
const SECRET_BODY_LENGTH = 40;

export const newGatewaySecret = (): string => GATEWAY_KEY_PREFIX + randomAlphanumeric(SECRET_BODY_LENGTH);
export const newMasterSecret = (): string => MASTER_KEY_PREFIX + randomAlphanumeric(SECRET_BODY_LENGTH);

/** Platform secret keys (backends mint end-user sessions with them) and the session tokens. */
export const PLATFORM_KEY_PREFIX = "sk_";
export const SESSION_TOKEN_PREFIX = "swbs_";
export const newPlatformSecret = (): string => PLATFORM_KEY_PREFIX + randomAlphanumeric(SECRET_BODY_LENGTH);
export const newSessionSecret = (): string => SESSION_TOKEN_PREFIX + randomAlphanumeric(SECRET_BODY_LENGTH);

const GATEWAY_KEY_RE = /^swb_[A-Za-z0-9]{40}$/;
const MASTER_KEY_RE = /^swbm_[A-Za-z0-9]{40}$/;
const PLATFORM_KEY_RE = /^sk_[A-Za-z0-9]{40}$/;
const SESSION_TOKEN_RE = /^swbs_[A-Za-z0-9]{40}$/;
export const looksLikeGatewayKey = (s: string): boolean => GATEWAY_KEY_RE.test(s);
export const looksLikeMasterKey = (s: string): boolean => MASTER_KEY_RE.test(s);
export const looksLikePlatformKey = (s: string): boolean => PLATFORM_KEY_RE.test(s);
export const looksLikeSessionToken = (s: string): boolean => SESSION_TOKEN_RE.test(s);

/** `swb_AbCd…wxYz`: shown in listings instead of the secret. */
export function prefixHint(secret: string): string {
  const sep = secret.indexOf("_") + 1;
  return `${secret.slice(0, sep + 4)}…${secret.slice(-4)}`;
}

export function toHex(buf: ArrayBuffer): string {
  const bytes = new Uint8Array(buf);
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** base64url without padding (JWTs, PKCE challenges, signed tokens). */
export const base64Url = (bytes: Uint8Array): string => toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export function fromBase64(b64: string): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const hmacKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    hmacKeys.set(secret, key);
  }
  return key;
}

/** Fingerprints computed in this isolate, per hash secret and key secret (a busy key is hashed once). */
const fingerprints = new Map<string, string>();
const MAX_FINGERPRINTS = 1_000;

/** HMAC-SHA-256 fingerprint (hex) of a key secret under KEY_HASH_SECRET. */
export async function fingerprint(hashSecret: string, secret: string): Promise<string> {
  const memo = `${hashSecret.length}:${hashSecret}${secret}`;
  const known = fingerprints.get(memo);
  if (known !== undefined) return known;
  const fp = toHex(await crypto.subtle.sign("HMAC", await hmacKey(hashSecret), encoder.encode(secret)));
  if (fingerprints.size >= MAX_FINGERPRINTS) fingerprints.clear();
  fingerprints.set(memo, fp);
  return fp;
}

export async function sha256Hex(input: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(input)));
}

/** Constant-time string comparison (equal length required for a match; length leaks only via the early exit). */
export function timingSafeEqual(a: string, b: string): boolean {
  const ab = encoder.encode(a);
  const bb = encoder.encode(b);
  if (ab.byteLength !== bb.byteLength) {
    // Compare against itself so the time does not depend on where the strings differ.
    crypto.subtle.timingSafeEqual(ab, ab);
    return false;
  }
  return crypto.subtle.timingSafeEqual(ab, bb);
}

const aesKeys = new Map<string, Promise<CryptoKey>>();

/** AES-256-GCM key derived from KEY_HASH_SECRET with HKDF (info distinguishes the purpose). */
function aesKey(hashSecret: string): Promise<CryptoKey> {
  let key = aesKeys.get(hashSecret);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(hashSecret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: encoder.encode("switchboard"), info: encoder.encode("provider-credentials-v1") },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    aesKeys.set(hashSecret, key);
  }
  return key;
}

/** Encrypts a provider credential: `v1.<iv b64>.<ciphertext b64>`. */
export async function encryptSecret(hashSecret: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await aesKey(hashSecret), encoder.encode(plaintext));
  return `v1.${toBase64(iv)}.${toBase64(new Uint8Array(ct))}`;
}

export async function decryptSecret(hashSecret: string, sealed: string): Promise<string> {
  const [version, ivB64, ctB64] = sealed.split(".");
  if (version !== "v1" || !ivB64 || !ctB64) throw new Error("unknown ciphertext format");
  const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(ivB64) }, await aesKey(hashSecret), fromBase64(ctB64));
  return new TextDecoder().decode(pt);
}

/** Last four characters of a credential, for labels; never more. */
export const tokenHint = (token: string): string => (token.length > 8 ? `…${token.slice(-4)}` : "…");

/** The fingerprint secret; a deployment without it answers 503 rather than storing weak hashes. */
export function requireHashSecret(env: Env): string {
  const secret = env.KEY_HASH_SECRET;
  if (!secret) {
    throw new ApiError(503, "The gateway is not configured: KEY_HASH_SECRET is missing.", { type: "api_error", code: "misconfigured" });
  }
  return secret;
}

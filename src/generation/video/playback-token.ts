/**
 * Signed playback tokens for `GET /v1/videos/logs/{log_id}/content?token=...` (spec 4.1), for
 * players that cannot send an Authorization header. Format `<expiry epoch s>.<base64url HMAC>`,
 * HMAC-SHA-256 over `<log id>.<expiry>` with a key derived from KEY_HASH_SECRET (purpose-bound,
 * so it never equals a key fingerprint). Valid for PLAYBACK_TOKEN_TTL_S.
 */
import { requireHashSecret } from "../../lib/crypto";
import type { Env } from "../../env";
import { base64Url } from "../../lib/crypto";
import { timingSafeEqual } from "../../lib/crypto";

export const PLAYBACK_TOKEN_TTL_S = 30 * 60;
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function playbackKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const derived = await crypto.subtle.sign("HMAC", base, encoder.encode("switchboard:video-playback:v1"));
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    })();
    keys.set(secret, key);
  }
  return key;
}

async function sign(env: Env, logId: string, exp: number): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", await playbackKey(requireHashSecret(env)), encoder.encode(`${logId}.${exp}`));
  return base64Url(new Uint8Array(sig));
}

export async function mintPlaybackToken(env: Env, logId: string, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
  const exp = Math.floor(now / 1000) + PLAYBACK_TOKEN_TTL_S;
  return { token: `${exp}.${await sign(env, logId, exp)}`, expiresAt: exp * 1000 };
}

export async function verifyPlaybackToken(env: Env, logId: string, token: string, now = Date.now()): Promise<boolean> {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m?.[1] || !m[2]) return false;
  const exp = Number(m[1]);
  if (exp * 1000 <= now) return false;
  return timingSafeEqual(await sign(env, logId, exp), m[2]);
}

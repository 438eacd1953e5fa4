/** PKCE (RFC 7636), S256 only. */
import { base64Url } from "../lib/crypto";

const encoder = new TextEncoder();

export const VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** base64url of a SHA-256 digest: exactly 43 characters, no padding. */
export const CHALLENGE_RE = /^[A-Za-z0-9\-_]{43}$/;


export async function s256Challenge(verifier: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(verifier))));
}

/** Constant-time check that `verifier` hashes to `challenge`. */
export async function verifyPkce(verifier: string, challenge: string): Promise<boolean> {
  if (!VERIFIER_RE.test(verifier)) return false;
  const a = encoder.encode(await s256Challenge(verifier));
  const b = encoder.encode(challenge);
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}

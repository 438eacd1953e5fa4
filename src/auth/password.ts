/**
 * Password hashing with PBKDF2-SHA-256 (WebCrypto), constant-time verification.
 * Format: `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`.
 */
import { fromBase64, timingSafeEqual, toBase64 } from "../lib/crypto";

/** Workers cap PBKDF2 at 100k iterations. */
const ITERATIONS = 100_000;
const encoder = new TextEncoder();

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const base = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, base, 256);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, ITERATIONS);
  return `pbkdf2-sha256$${ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [scheme, iter, saltB64, hashB64] = stored.split("$");
  if (scheme !== "pbkdf2-sha256" || !iter || !saltB64 || !hashB64) return false;
  const hash = await derive(password, fromBase64(saltB64), Number(iter));
  return timingSafeEqual(toBase64(hash), hashB64);
}

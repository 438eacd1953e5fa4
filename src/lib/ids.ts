const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * Random bytes are drawn from the CSPRNG in blocks: one `getRandomValues` call serves many ids.
 * The pool is plain bytes (no shared promise or I/O object), consumed once each.
 */
const pool = new Uint8Array(4096);
let poolPos = pool.length;

function randomByte(): number {
  if (poolPos >= pool.length) {
    crypto.getRandomValues(pool);
    poolPos = 0;
  }
  return pool[poolPos++]!;
}

/** Uniformly random `[A-Za-z0-9]` string (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = "";
  while (out.length < length) {
    // 248 = 4 * 62: bytes below it map uniformly; the ~3% above are skipped.
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62]!;
  }
  return out;
}

/** Resource ids: `org_`, `proj_`, `key_`, `mem_`, `team_`, `iam_`, `log_`, ... + 20 random chars. */
export const newId = (prefix: string): string => `${prefix}_${randomAlphanumeric(20)}`;

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

const ALPHABET_CODES = Array.from(ALPHABET, (ch) => ch.charCodeAt(0));
/** Character codes of the id being drawn: reused, so an id allocates only its own string. */
const codes: number[] = [];

/**
 * Uniformly random `[A-Za-z0-9]` string (rejection sampling, no modulo bias). Built from character
 * codes in one step: appending a character at a time made a new string per character, and every
 * request draws two ids.
 */
export function randomAlphanumeric(length: number): string {
  codes.length = length;
  for (let i = 0; i < length; ) {
    // 248 = 4 * 62: bytes below it map uniformly; the ~3% above are skipped.
    const b = randomByte();
    if (b < 248) codes[i++] = ALPHABET_CODES[b % 62]!;
  }
  return String.fromCharCode(...codes);
}

/** Resource ids: `org_`, `proj_`, `key_`, `mem_`, `team_`, `iam_`, `log_`, ... + 20 random chars. */
export const newId = (prefix: string): string => `${prefix}_${randomAlphanumeric(20)}`;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Uniformly random `[A-Za-z0-9]` string (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  const chars: string[] = [];
  // 248 = 4 * 62: bytes below it map uniformly; ~3% are rejected, so 1.25x is nearly always enough.
  const buf = new Uint8Array(Math.ceil(length * 1.25) + 4);
  while (chars.length < length) {
    crypto.getRandomValues(buf);
    for (let i = 0; i < buf.length && chars.length < length; i++) {
      const b = buf[i]!;
      if (b < 248) chars.push(ALPHABET[b % 62]!);
    }
  }
  return chars.join("");
}

/** Resource ids: `org_`, `proj_`, `key_`, `mem_`, `team_`, `iam_`, `log_`, ... + 20 random chars. */
export const newId = (prefix: string): string => `${prefix}_${randomAlphanumeric(20)}`;

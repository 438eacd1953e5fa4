const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Uniformly random `[A-Za-z0-9]` string (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = "";
  const buf = new Uint8Array(length * 2);
  while (out.length < length) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Resource ids: `org_`, `proj_`, `key_`, `mem_`, `team_`, `iam_`, `log_`, ... + 20 random chars. */
export const newId = (prefix: string): string => `${prefix}_${randomAlphanumeric(20)}`;

/**
 * How OAuth codes and tokens, OAuth client secrets, dashboard session tokens and membership
 * invitation tokens are stored: as
 * the keyed HMAC-SHA-256 fingerprint (KEY_HASH_SECRET), like every gateway, master and platform
 * key (`fingerprint`). A copy of the database alone then cannot test a guessed secret.
 *
 * Migration from plain SHA-256 (rows written before the change). Both are 64 hex characters, so a
 * lookup matches either value in one statement (`IN (keyed, legacy)`); a row found by its legacy
 * value is rewritten to the keyed one at that use, so live sessions and tokens keep working and
 * convert as they are used. The legacy fallback can be removed once no legacy row can still be
 * used: 30 days after the deploy for codes (10 min), access tokens (1 h), refresh tokens (30 days)
 * dashboard sessions and invitations (7 days); OAuth client secrets never expire, so a confidential client
 * that has not authenticated by then has to register again (docs/security.md).
 */
import { fingerprint, sha256Hex } from "./crypto";

export interface SecretHashes {
  /** The value written for new rows, and what every row ends up with. */
  keyed: string;
  /** Plain SHA-256: matched only to find and rewrite rows written before the change. */
  legacy: string;
}

export async function secretHashes(hashSecret: string, secret: string): Promise<SecretHashes> {
  const [keyed, legacy] = await Promise.all([fingerprint(hashSecret, secret), sha256Hex(secret)]);
  return { keyed, legacy };
}

/** The two values a stored hash may have, for `inArray(column, candidates(h))`. */
export const candidates = (h: SecretHashes): [string, string] => [h.keyed, h.legacy];

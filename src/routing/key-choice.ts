/**
 * Several provider keys per provider (contract section 8): a request takes one of the keys that
 * may serve its endpoint at random in proportion to their weights; a key that answered 401, 403,
 * 429 or 5xx is skipped for the rest of the request (the next attempt tries another key of the
 * same provider before another provider, src/routes/chat/execute.ts) and, for KEY_COOLDOWN_MS,
 * by the requests this isolate starts next. That memory is a hint, not state: another isolate may
 * still pick the key once and learn the same; a key every other key of which is cooling down is
 * still used (a cooling key is better than no key).
 */
import type { ProviderKeyRecord } from "../context/key-context";
import { normalRegion } from "./regions";

/** How long a failed key is avoided by new requests of this isolate. */
export const KEY_COOLDOWN_MS = 30_000;

const coolingUntil = new Map<string, number>();

/**
 * The organization's keys of a provider that may serve an endpoint in `region`: a key with that
 * region, or one without a region (any endpoint), unless it has its own base URL (which is one
 * place: it serves only the default endpoint, so no other region is claimed for it).
 */
export function keysForEndpoint(keys: readonly ProviderKeyRecord[], providerId: string, region: string, isDefault = true): ProviderKeyRecord[] {
  const r = normalRegion(region);
  return keys.filter((k) => k.provider === providerId && (k.region ? normalRegion(k.region) === r : isDefault || !k.baseUrl));
}

const weightOf = (k: ProviderKeyRecord): number => (k.weight && k.weight > 0 ? k.weight : 1);

const cooling = (k: ProviderKeyRecord, now: number): boolean => (coolingUntil.get(k.id) ?? 0) > now;

/**
 * A key by weight among `keys` not in `skip`, preferring keys that are not cooling down; null when
 * every key is skipped.
 */
export function pickKey(keys: readonly ProviderKeyRecord[], skip: ReadonlySet<string>, random: () => number = Math.random, now = Date.now()): ProviderKeyRecord | null {
  const open = keys.filter((k) => !skip.has(k.id));
  if (open.length <= 1) return open[0] ?? null;
  const healthy = open.filter((k) => !cooling(k, now));
  const pool = healthy.length ? healthy : open;
  const total = pool.reduce((s, k) => s + weightOf(k), 0);
  let x = random() * total;
  for (const k of pool) {
    x -= weightOf(k);
    if (x < 0) return k;
  }
  return pool[pool.length - 1] ?? null;
}

/** Whether an upstream status says the key itself is spent or refused (another key may work). */
export const isKeyFailure = (status: number): boolean => status === 401 || status === 403 || status === 429 || status >= 500;

/** Remembers a failed key for KEY_COOLDOWN_MS. */
export function noteKeyFailure(keyId: string, now = Date.now()): void {
  if (coolingUntil.size > 10_000) coolingUntil.clear();
  coolingUntil.set(keyId, now + KEY_COOLDOWN_MS);
}

/** Tests only. */
export function resetKeyHealth(): void {
  coolingUntil.clear();
}

/**
 * After `cand` failed with `status`: the same candidate with another of the organization's keys
 * for its endpoint (by weight among those this request has not tried), or null. The failed key is
 * remembered (noteKeyFailure).
 */
export function withAnotherKey<C extends { credential: object }>(cand: C, status: number, tried: Set<string>): C | null {
  // Structural (a candidate's credential plan with keys), so the candidates module can import this one.
  const plan = cand.credential as { providerKey?: ProviderKeyRecord; keys?: ProviderKeyRecord[] };
  if (!plan.providerKey || !isKeyFailure(status)) return null;
  noteKeyFailure(plan.providerKey.id);
  tried.add(plan.providerKey.id);
  const next = plan.keys ? pickKey(plan.keys, tried) : null;
  if (!next) return null;
  tried.add(next.id);
  return { ...cand, credential: { ...plan, providerKey: next } };
}

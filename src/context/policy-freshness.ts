/**
 * How fresh the rules an early upstream call is made under must be (docs/admission.md, "How old
 * the rules of an early call may be"). An early call is sent before the key's object answered, so
 * it goes out under the rules this isolate last knew. A deny rule (provider, model, region,
 * pricing) exists to keep the prompt away from somewhere; cancelling the call later does not
 * un-send it. So an isolate starts an early call only under rules that its key's object (or the
 * D1 primary) confirmed less than `POLICY_FRESHNESS_MS` (default 30 s) ago, and never for an
 * organization in strict mode (`compliance.strictPolicy`); otherwise the first upstream call waits
 * for admission, whose answer confirms (or reloads) the rules.
 *
 * Why a confirmation covers every rule: each change of IAM rules (key, member, team), compliance
 * settings, project or provider keys bumps the version of every key it affects and syncs their
 * objects before the API answers (src/keys/sync.ts). A confirmation sent after a change returned
 * therefore carries a version at least as new as the change, and a context of that version holds
 * it. The time kept is when the confirming call was SENT, so it never postdates what it confirms.
 *
 * Kept per isolate and key (one entry: the latest version seen and when it was confirmed). A
 * context of an older version has no confirmation at all: after one request of this isolate
 * learnt of a change, no other request holding the old context calls early.
 */
import type { Env } from "../env";
import { leaseVouches } from "../auth/leases";

/** Default bound: a rule change applies to every request that starts this long after it returned. */
export const DEFAULT_POLICY_FRESHNESS_MS = 30_000;
const MAX_ENTRIES = 10_000;

const confirmed = new Map<string, { version: number; at: number }>();

/** What of a key context the bound reads (structural, so the key context can import this module). */
export interface PolicySubject {
  key: { id: string; version: number; fingerprint: string };
  organization: { compliance: { strictPolicy?: boolean } };
}

/** The freshness bound in ms (`POLICY_FRESHNESS_MS`; tests shorten it instead of sleeping 30 s). */
export function policyFreshnessMs(env: Env): number {
  const raw = Number(env.POLICY_FRESHNESS_MS);
  return env.POLICY_FRESHNESS_MS !== undefined && env.POLICY_FRESHNESS_MS !== "" && Number.isFinite(raw) && raw >= 0 ? raw : DEFAULT_POLICY_FRESHNESS_MS;
}

/**
 * The key's object (or the D1 primary) reported `version` as current for a call sent at `sentAt`.
 * A newer version replaces the entry (the older one is no longer confirmed); the same one moves
 * the time forward.
 */
export function noteConfirmed(keyId: string, version: number, sentAt: number): void {
  const prev = confirmed.get(keyId);
  if (prev && (prev.version > version || (prev.version === version && prev.at >= sentAt))) return;
  if (!prev && confirmed.size >= MAX_ENTRIES) {
    // Map iterates in insertion order: drop the oldest (that key then waits for admission once).
    const oldest = confirmed.keys().next().value;
    if (oldest !== undefined) confirmed.delete(oldest);
  }
  confirmed.set(keyId, { version, at: sentAt });
}

/** When this context's rules were last confirmed in this isolate, or null (never, or an older version). */
export function confirmedAt(ctx: PolicySubject): number | null {
  const c = confirmed.get(ctx.key.id);
  return c && c.version === ctx.key.version ? c.at : null;
}

/** Whether the organization asked that no upstream call start before its key's rules are confirmed. */
export const strictPolicy = (ctx: PolicySubject): boolean => ctx.organization.compliance.strictPolicy === true;

/**
 * Whether a request starting `now` may send its first upstream call before admission confirmed
 * its rules. A live lease of the key for this version counts as a confirmation made now: the
 * object granted it less than a lease's life ago, and every change waits for the leases granted
 * before it to end before it returns.
 */
export function rulesFreshEnough(env: Env, ctx: PolicySubject, now = Date.now()): boolean {
  if (strictPolicy(ctx)) return false;
  if (leaseVouches(`key:${ctx.key.id}`, ctx.key.version, ctx.key.fingerprint, now)) return true;
  const at = confirmedAt(ctx);
  return at !== null && now - at < policyFreshnessMs(env);
}

/** Tests only. */
export function clearConfirmations(): void {
  confirmed.clear();
}

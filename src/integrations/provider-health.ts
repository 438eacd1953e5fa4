/**
 * `provider.down` / `provider.recovered` webhook events. The ProviderMetrics object (one, global)
 * judges each provider's uptime over the metrics window, all its models together: attempts that
 * succeeded over attempts counted (src/routing/metrics.ts): below DOWN_BELOW with at least
 * MIN_ATTEMPTS attempts it is down; a down provider recovers at RECOVERED_AT or above (a gap
 * between the two, so a provider hovering at 90% does not flap). Every organization with a webhook
 * subscribed to the event gets it.
 */
import type { Env } from "../env";
import { splitSeriesKey, summarize, type Series } from "../routing/metrics";
import { emitGlobalWebhookEvent } from "./webhooks";

export const DOWN_BELOW = 0.9;
export const RECOVERED_AT = 0.95;
export const MIN_ATTEMPTS = 10;

/** Each provider's uptime (attempt-weighted over its models) and attempts in the window. */
export function providerUptimes(series: Series, now: number): Map<string, { uptime: number; attempts: number }> {
  const acc = new Map<string, { ok: number; attempts: number }>();
  for (const [key, buckets] of Object.entries(series)) {
    const { provider } = splitSeriesKey(key);
    const s = summarize(buckets, now);
    const a = acc.get(provider) ?? { ok: 0, attempts: 0 };
    // Raw counts, not the routing score's recency-weighted uptime: an alert says what happened.
    a.ok += s.requests - s.errors;
    a.attempts += s.requests;
    acc.set(provider, a);
  }
  return new Map([...acc].map(([p, a]) => [p, { uptime: a.attempts ? a.ok / a.attempts : 1, attempts: a.attempts }]));
}

/** The providers that went down and those that recovered, given the ones down before. */
export function healthTransitions(uptimes: ReadonlyMap<string, { uptime: number; attempts: number }>, downBefore: ReadonlySet<string>): { down: string[]; recovered: string[] } {
  const down: string[] = [];
  const recovered: string[] = [];
  for (const [p, u] of uptimes) {
    if (!downBefore.has(p) && u.attempts >= MIN_ATTEMPTS && u.uptime < DOWN_BELOW) down.push(p);
    if (downBefore.has(p) && u.uptime >= RECOVERED_AT) recovered.push(p);
  }
  // A down provider with no attempts left in the window is no longer known to be down.
  for (const p of downBefore) if (!uptimes.has(p)) recovered.push(p);
  return { down, recovered };
}

/** Judges the series; emits the transitions; returns the providers down now. Never throws. */
export async function checkProviderHealth(env: Env, series: Series, downBefore: ReadonlySet<string>, now: number): Promise<Set<string>> {
  const uptimes = providerUptimes(series, now);
  const { down, recovered } = healthTransitions(uptimes, downBefore);
  const next = new Set(downBefore);
  for (const p of down) {
    next.add(p);
    await emitGlobalWebhookEvent(env, "provider.down", { provider: p, uptime: Number((uptimes.get(p)?.uptime ?? 0).toFixed(4)) });
  }
  for (const p of recovered) {
    next.delete(p);
    await emitGlobalWebhookEvent(env, "provider.recovered", { provider: p, uptime: Number((uptimes.get(p)?.uptime ?? 1).toFixed(4)) });
  }
  return next;
}

/**
 * Isolate view of the live metrics: snapshots of the ProviderMetrics objects refreshed in the
 * background (stale-while-revalidate, every REFRESH_MS), plus the attempts this isolate made that
 * the snapshots do not contain yet. There is one view per scope: the global series (every caller)
 * and one per caller continent (src/durable-objects/provider-metrics.ts), each read the same way.
 * Routing never waits for them: before the first snapshot arrives every provider has the defaults
 * (100% uptime, unknown speed), which is what a fresh isolate should assume. An isolate serves the
 * callers of its own edge location, so it refreshes only the continents it has seen recently.
 */
import type { Env } from "../env";
import { metricsStub, type MetricsScope } from "../durable-objects/provider-metrics";
import { addSample, mergeBuckets, minuteOf, seriesKey, summarize, type AttemptSample, type Bucket, type Series } from "./metrics";
import type { Continent } from "./regions";
import type { RouteStats } from "./score";

const REFRESH_MS = 5_000;
/**
 * A refresh still pending after this long is abandoned (the request that ran it was cancelled, so
 * its promise never settles): the next request starts a new one instead of never refreshing again.
 */
const REFRESH_ABANDONED_MS = 15_000;
/** Samples not yet sent to an object are sent at most this often. */
const SEND_EVERY_MS = 1_000;
const MAX_QUEUED = 10_000;

interface Pending {
  sample: AttemptSample;
  /** When the DO acknowledged the write (epoch ms), null while in flight. */
  flushedAt: number | null;
}

/** What this isolate knows of one scope's series. */
class ScopeView {
  snapshot: Series = {};
  snapshotAt = 0;
  refreshing: Promise<void> | null = null;
  refreshStartedAt = 0;
  pending: Pending[] = [];
  /** Buckets of `pending` per series, kept up to date incrementally (routing reads them per request). */
  localBuckets = new Map<string, Bucket[]>();
  /**
   * Per series with local samples, the snapshot's buckets merged with them (copies): a new sample
   * is added to it as to `localBuckets`, so a busy series is not merged again per request.
   */
  private merged = new Map<string, Bucket[]>();
  unsent: Pending[] = [];
  lastSentAt = 0;

  /**
   * Each series' stats as last computed, with the minute they were computed in: a summary depends
   * only on the series' buckets and the current minute (decay is per whole minute), and ranking,
   * exploration and the attempt's timeouts read the same series several times per request. A
   * sample added to a series, or a new snapshot, drops what it changed.
   */
  private stats = new Map<string, { minute: number; stats: RouteStats }>();

  constructor(readonly scope: MetricsScope) {}

  setSnapshot(s: Series, at: number): void {
    this.snapshot = s;
    this.snapshotAt = at;
    this.merged.clear();
    this.stats.clear();
  }

  rebuildLocalBuckets(): void {
    this.localBuckets = new Map();
    this.merged.clear();
    this.stats.clear();
    for (const p of this.pending) this.addLocal(p.sample);
  }

  addLocal(sample: AttemptSample): void {
    const key = seriesKey(sample.provider, sample.model);
    this.localBuckets.set(key, addSample(this.localBuckets.get(key) ?? [], sample));
    const merged = this.merged.get(key);
    if (merged) this.merged.set(key, addSample(merged, sample));
    this.stats.delete(key);
  }

  statsOf(key: string, now: number): RouteStats {
    const minute = minuteOf(now);
    const hit = this.stats.get(key);
    if (hit && hit.minute === minute) return hit.stats;
    const stats = routeStatsOf(this.buckets(key), now);
    this.stats.set(key, { minute, stats });
    return stats;
  }

  buckets(key: string): Bucket[] {
    const local = this.localBuckets.get(key);
    if (!local?.length) return this.snapshot[key] ?? [];
    let merged = this.merged.get(key);
    if (!merged) this.merged.set(key, (merged = mergeBuckets(this.snapshot[key] ?? [], local)));
    return merged;
  }
}

let views = new Map<MetricsScope, ScopeView>();
const inFlight = new Set<Promise<void>>();

function viewOf(scope: MetricsScope): ScopeView {
  let v = views.get(scope);
  if (!v) views.set(scope, (v = new ScopeView(scope)));
  return v;
}

function refresh(env: Env, v: ScopeView): Promise<void> {
  const startedAt = Date.now();
  if (v.refreshing && startedAt - v.refreshStartedAt < REFRESH_ABANDONED_MS) return v.refreshing;
  v.refreshStartedAt = startedAt;
  const mine: Promise<void> = metricsStub(env, v.scope)
    .snapshot()
    .then((s) => {
      v.setSnapshot(s, Date.now());
      // Samples whose write landed before this read started are in the snapshot now.
      v.pending = v.pending.filter((p) => p.flushedAt === null || p.flushedAt > startedAt);
      v.rebuildLocalBuckets();
    })
    .catch((err: unknown) => {
      v.snapshotAt = Date.now(); // back off for one period instead of hammering a failing object
      console.warn("provider metrics refresh failed", v.scope, err instanceof Error ? err.message : String(err));
    })
    .finally(() => {
      if (v.refreshing === mine) v.refreshing = null;
    });
  v.refreshing = mine;
  return mine;
}

function maybeRefresh(env: Env, v: ScopeView, waitUntil: (p: Promise<unknown>) => void, now: number): void {
  if (now - v.snapshotAt >= REFRESH_MS && (!v.refreshing || now - v.refreshStartedAt >= REFRESH_ABANDONED_MS)) waitUntil(refresh(env, v));
}

/**
 * Starts a background refresh of the global snapshot, and of the caller's continent's, when older
 * than REFRESH_MS. Never blocks.
 */
export function maybeRefreshMetrics(env: Env, waitUntil: (p: Promise<unknown>) => void, continent: Continent | null = null): void {
  const now = Date.now();
  maybeRefresh(env, viewOf("global"), waitUntil, now);
  if (continent) maybeRefresh(env, viewOf(continent), waitUntil, now);
}

function routeStatsOf(buckets: readonly Bucket[], now: number): RouteStats {
  const s = summarize(buckets, now);
  return { uptime: s.uptime, throughput: s.throughput, latencyMs: s.latencyMs, ttftP95Ms: s.ttftP95Ms, ttftP99Ms: s.ttftP99Ms, samples: s.requests };
}

/** The returned stats may be shared with other readers of the series: never change them in place. */
function statsOf(v: ScopeView | undefined, provider: string, model: string, now: number): RouteStats {
  return v ? v.statsOf(seriesKey(provider, model), now) : routeStatsOf([], now);
}

/** Current stats of one provider+model over every caller (snapshot + this isolate's unflushed attempts). */
export function routeStats(provider: string, model: string, now = Date.now()): RouteStats {
  return statsOf(views.get("global"), provider, model, now);
}

/** Current stats of one provider+model as seen by callers on one continent. */
export function continentStats(continent: Continent, provider: string, model: string, now = Date.now()): RouteStats {
  return statsOf(views.get(continent), provider, model, now);
}

/**
 * Feeds attempts to this isolate's views at once (the global one, and the caller's continent's
 * when known) and to their objects in the background: the request that finds a view's last send
 * older than SEND_EVERY_MS sends everything queued, in its own context (a request never waits on
 * another request's I/O). Metrics only: a sample still queued when the isolate goes away is lost,
 * which routing tolerates.
 */
export function reportAttempts(env: Env, waitUntil: (p: Promise<unknown>) => void, samples: AttemptSample[], continent: Continent | null = null): void {
  if (!samples.length) return;
  for (const v of continent ? [viewOf("global"), viewOf(continent)] : [viewOf("global")]) {
    const entries: Pending[] = samples.map((sample) => ({ sample, flushedAt: null }));
    v.pending.push(...entries);
    for (const e of entries) v.addLocal(e.sample);
    if (v.pending.length > MAX_QUEUED) {
      v.pending = v.pending.slice(-MAX_QUEUED);
      v.rebuildLocalBuckets();
    }
    v.unsent.push(...entries);
    if (v.unsent.length > MAX_QUEUED) v.unsent = v.unsent.slice(-MAX_QUEUED);
    if (Date.now() - v.lastSentAt >= SEND_EVERY_MS) waitUntil(sendView(env, v));
  }
}

function sendView(env: Env, v: ScopeView): Promise<void> {
  const batch = v.unsent;
  v.unsent = [];
  v.lastSentAt = Date.now();
  if (!batch.length) return Promise.resolve();
  const write: Promise<void> = metricsStub(env, v.scope)
    .record(batch.map((e) => e.sample))
    .then(() => {
      const at = Date.now();
      for (const e of batch) e.flushedAt = at;
    })
    .catch((err: unknown) => {
      console.warn("provider metrics write failed", v.scope, err instanceof Error ? err.message : String(err));
    })
    .finally(() => inFlight.delete(write));
  inFlight.add(write);
  return write;
}

/** Sends every view's queued samples now (also used before reading the metrics). */
export async function sendQueued(env: Env): Promise<void> {
  await Promise.all([...views.values()].map((v) => sendView(env, v)));
}

/** Resolves once every metrics write this isolate started has finished (tests, shutdown). */
export async function metricsWritesSettled(env?: Env): Promise<void> {
  if (env) await sendQueued(env);
  while (inFlight.size) await Promise.all([...inFlight]);
}

/** Tests only: forget everything this isolate knows. */
export function resetLiveMetrics(): void {
  views = new Map();
}

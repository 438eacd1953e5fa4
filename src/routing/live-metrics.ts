/**
 * Isolate view of the live metrics: a snapshot of the global ProviderMetrics object refreshed in
 * the background (stale-while-revalidate, every REFRESH_MS), plus the attempts this isolate made
 * that the snapshot does not contain yet. Routing never waits for it: before the first snapshot
 * arrives every provider has the defaults (100% uptime, unknown speed), which is what a fresh
 * isolate should assume.
 */
import type { Env } from "../env";
import { metricsStub } from "../durable-objects/provider-metrics";
import { addSample, mergeBuckets, seriesKey, summarize, type AttemptSample, type Bucket, type Series } from "./metrics";
import type { RouteStats } from "./score";

const REFRESH_MS = 5_000;

interface Pending {
  sample: AttemptSample;
  /** When the DO acknowledged the write (epoch ms), null while in flight. */
  flushedAt: number | null;
}

let snapshot: Series = {};
let snapshotAt = 0;
let refreshing: Promise<void> | null = null;
let refreshStartedAt = 0;
/**
 * A refresh still pending after this long is abandoned (the request that ran it was cancelled, so
 * its promise never settles): the next request starts a new one instead of never refreshing again.
 */
const REFRESH_ABANDONED_MS = 15_000;
let pending: Pending[] = [];
/** Buckets of `pending` per series, kept up to date incrementally (routing reads them per request). */
let localBuckets = new Map<string, Bucket[]>();
const inFlight = new Set<Promise<void>>();

function rebuildLocalBuckets(): void {
  localBuckets = new Map();
  for (const p of pending) addLocal(p.sample);
}

function addLocal(sample: AttemptSample): void {
  const key = seriesKey(sample.provider, sample.model);
  localBuckets.set(key, addSample(localBuckets.get(key) ?? [], sample));
}

function refresh(env: Env): Promise<void> {
  const startedAt = Date.now();
  if (refreshing && startedAt - refreshStartedAt < REFRESH_ABANDONED_MS) return refreshing;
  refreshStartedAt = startedAt;
  const mine: Promise<void> = metricsStub(env)
    .snapshot()
    .then((s) => {
      snapshot = s;
      snapshotAt = Date.now();
      // Samples whose write landed before this read started are in the snapshot now.
      pending = pending.filter((p) => p.flushedAt === null || p.flushedAt > startedAt);
      rebuildLocalBuckets();
    })
    .catch((err: unknown) => {
      snapshotAt = Date.now(); // back off for one period instead of hammering a failing object
      console.warn("provider metrics refresh failed", err instanceof Error ? err.message : String(err));
    })
    .finally(() => {
      if (refreshing === mine) refreshing = null;
    });
  refreshing = mine;
  return mine;
}

/** Starts a background refresh when the snapshot is older than REFRESH_MS. Never blocks. */
export function maybeRefreshMetrics(env: Env, waitUntil: (p: Promise<unknown>) => void): void {
  const now = Date.now();
  if (now - snapshotAt >= REFRESH_MS && (!refreshing || now - refreshStartedAt >= REFRESH_ABANDONED_MS)) waitUntil(refresh(env));
}

/** Current stats of one provider+model (snapshot + this isolate's unflushed attempts). */
export function routeStats(provider: string, model: string, now = Date.now()): RouteStats {
  const key = seriesKey(provider, model);
  const local = localBuckets.get(key);
  const buckets: Bucket[] = local?.length ? mergeBuckets(snapshot[key] ?? [], local) : (snapshot[key] ?? []);
  const s = summarize(buckets, now);
  return { uptime: s.uptime, throughput: s.throughput, latencyMs: s.latencyMs, ttftP95Ms: s.ttftP95Ms, ttftP99Ms: s.ttftP99Ms, samples: s.requests };
}

/** Samples not yet sent to the global object; sent at most every SEND_EVERY_MS. */
let unsent: Pending[] = [];
let lastSentAt = 0;
const SEND_EVERY_MS = 1_000;

/**
 * Feeds attempts to this isolate's view at once and to the global object in the background:
 * the request that finds the last send older than SEND_EVERY_MS sends everything queued, in its
 * own context (a request never waits on another request's I/O). Metrics only: a sample still
 * queued when the isolate goes away is lost, which routing tolerates.
 */
export function reportAttempts(env: Env, waitUntil: (p: Promise<unknown>) => void, samples: AttemptSample[]): void {
  if (!samples.length) return;
  const entries: Pending[] = samples.map((sample) => ({ sample, flushedAt: null }));
  pending.push(...entries);
  for (const e of entries) addLocal(e.sample);
  if (pending.length > 10_000) {
    pending = pending.slice(-10_000);
    rebuildLocalBuckets();
  }
  unsent.push(...entries);
  if (unsent.length > 10_000) unsent = unsent.slice(-10_000);
  if (Date.now() - lastSentAt >= SEND_EVERY_MS) waitUntil(sendQueued(env));
}

/** Sends the queued samples now (also used before reading the global metrics). */
export function sendQueued(env: Env): Promise<void> {
  const batch = unsent;
  unsent = [];
  lastSentAt = Date.now();
  if (!batch.length) return Promise.resolve();
  const write: Promise<void> = metricsStub(env)
    .record(batch.map((e) => e.sample))
    .then(() => {
      const at = Date.now();
      for (const e of batch) e.flushedAt = at;
    })
    .catch((err: unknown) => {
      console.warn("provider metrics write failed", err instanceof Error ? err.message : String(err));
    })
    .finally(() => inFlight.delete(write));
  inFlight.add(write);
  return write;
}

/** Resolves once every metrics write this isolate started has finished (tests, shutdown). */
export async function metricsWritesSettled(env?: Env): Promise<void> {
  if (env) await sendQueued(env);
  while (inFlight.size) await Promise.all([...inFlight]);
}

/** Tests only: forget everything this isolate knows. */
export function resetLiveMetrics(): void {
  snapshot = {};
  snapshotAt = 0;
  pending = [];
  localBuckets = new Map();
  unsent = [];
  lastSentAt = 0;
}

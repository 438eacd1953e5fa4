/**
 * Smart routing score (pure). Each candidate gets a weighted sum of components in [0, 1]:
 *
 * | component  | weight | value                                                                 |
 * |------------|--------|-----------------------------------------------------------------------|
 * | price      | 0.40   | cheapest estimated cost of THIS request / this candidate's cost       |
 * | uptime     | 0.30   | recent success rate (client errors excluded)                           |
 * | latency    | 0.15   | best time-to-first-token / this candidate's (unknown: 0.5)             |
 * | throughput | 0.10   | this candidate's output tokens/s / best (unknown: 0.5)                 |
 * | cache      | 0.05   | 1 when the prompt is long enough for the provider's prompt cache       |
 *
 * Below 95% uptime a penalty of 4 x (0.95 - uptime) is subtracted, so an unreliable provider
 * loses against any healthy one regardless of price (at 90% the penalty is 0.2, at 70% it is 1).
 * Ties keep the catalogue order. With probability `explorationRate` the first place goes to a
 * random other candidate among the top three, so metrics of the runners-up stay fresh; given
 * `needsEvidence`, to one of the two best runners-up it says should be measured against the leader
 * (per caller continent: candidate-stats.ts), wherever they rank, so a continent whose runners-up
 * are measured sends them nothing more, and one it has not measured is reached even behind others.
 */

export interface RouteStats {
  /** 0..1; 1 when nothing is known. */
  uptime: number;
  /** Output tokens per second, null when unknown. */
  throughput: number | null;
  /** Mean time to first token (ms), null when unknown. */
  latencyMs: number | null;
  /** 95th and 99th percentile time to first token (ms), null or absent while evidence is thin. */
  ttftP95Ms?: number | null;
  ttftP99Ms?: number | null;
  /** Attempts in the recent window (the evidence behind `uptime`); unknown counts as none. */
  samples?: number;
}

export interface ScoreInput {
  /** Estimated cost of this request on this candidate (pico-dollars). */
  cost: bigint;
  stats: RouteStats;
  /** The prompt is long enough to benefit from the provider's prompt cache. */
  cacheable: boolean;
}

export interface Weights {
  price: number;
  uptime: number;
  latency: number;
  throughput: number;
  cache: number;
}

export const DEFAULT_WEIGHTS: Readonly<Weights> = { price: 0.4, uptime: 0.3, latency: 0.15, throughput: 0.1, cache: 0.05 };

/** Uptime below which the score is penalised. */
export const UPTIME_PENALTY_THRESHOLD = 0.95;
const UPTIME_PENALTY_FACTOR = 4;
const UNKNOWN = 0.5;

export function scoreAll(inputs: readonly ScoreInput[], weights: Weights = DEFAULT_WEIGHTS): number[] {
  if (inputs.length === 0) return [];
  const minCost = inputs.reduce((m, i) => (i.cost < m ? i.cost : m), inputs[0]!.cost);
  const maxTps = Math.max(0, ...inputs.map((i) => i.stats.throughput ?? 0));
  const latencies = inputs.map((i) => i.stats.latencyMs).filter((v): v is number => v !== null && v > 0);
  const minLatency = latencies.length ? Math.min(...latencies) : null;

  return inputs.map((i) => {
    const price = i.cost <= 0n ? 1 : Number((minCost * 1_000_000n) / i.cost) / 1_000_000;
    const tp = i.stats.throughput === null || maxTps <= 0 ? UNKNOWN : i.stats.throughput / maxTps;
    const lat = i.stats.latencyMs === null || minLatency === null ? UNKNOWN : minLatency / Math.max(i.stats.latencyMs, 1);
    const uptime = clamp01(i.stats.uptime);
    const penalty = uptime < UPTIME_PENALTY_THRESHOLD ? (UPTIME_PENALTY_THRESHOLD - uptime) * UPTIME_PENALTY_FACTOR : 0;
    return (
      weights.price * price +
      weights.uptime * uptime +
      weights.latency * lat +
      weights.throughput * tp +
      weights.cache * (i.cacheable ? 1 : 0) -
      penalty
    );
  });
}

/**
 * Orders items best first. `random` returns [0, 1); exploration only happens when
 * `explorationRate > 0` and there are at least two candidates.
 */
export function rank<T>(
  items: readonly T[],
  input: (item: T) => ScoreInput,
  opts: { explorationRate: number; random?: () => number; weights?: Weights; needsEvidence?: (item: T, leader: T) => boolean } = { explorationRate: 0 },
): T[] {
  // One item has one order: its score (and the stats it reads) would change nothing.
  if (items.length < 2) return [...items];
  const scores = scoreAll(items.map(input), opts.weights);
  const order = items.map((item, index) => ({ item, index, score: scores[index]! }));
  order.sort((a, b) => b.score - a.score || a.index - b.index);
  const random = opts.random ?? Math.random;
  if (opts.explorationRate > 0 && order.length > 1 && random() < opts.explorationRate) {
    // With `needsEvidence`, only runners-up it names are explored (none: no exploration).
    const needs = opts.needsEvidence;
    const leader = order[0]!.item;
    const pool = needs ? order.slice(1).filter((o) => needs(o.item, leader)).slice(0, 2) : order.slice(1, 3);
    const chosen = pool[Math.floor(random() * pool.length)];
    if (chosen) order.unshift(...order.splice(order.indexOf(chosen), 1));
  }
  return order.map((o) => o.item);
}

const clamp01 = (v: number): number => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1);

/** A 0..1 rate from the environment; `fallback` when unset, and 0 when ENVIRONMENT is `test`. */
function rateOf(raw: string | undefined, environment: string | undefined, fallback: number): number {
  if (raw !== undefined && raw !== "") {
    const v = Number(raw);
    if (Number.isFinite(v)) return clamp01(v);
  }
  return environment === "test" ? 0 : fallback;
}

/** `ROUTING_EXPLORATION_RATE` (0..1); default 0.05, and 0 when ENVIRONMENT is `test`. */
export const explorationRate = (env: { ENVIRONMENT?: string; ROUTING_EXPLORATION_RATE?: string }): number =>
  rateOf(env.ROUTING_EXPLORATION_RATE, env.ENVIRONMENT, 0.05);

/**
 * `ROUTING_PINNED_PROBE_RATE` (0..1): share of requests that try a low-uptime pinned provider
 * first so it can recover; default 0.1, and 0 when ENVIRONMENT is `test`.
 */
export const pinnedProbeRate = (env: { ENVIRONMENT?: string; ROUTING_PINNED_PROBE_RATE?: string }): number =>
  rateOf(env.ROUTING_PINNED_PROBE_RATE, env.ENVIRONMENT, 0.1);

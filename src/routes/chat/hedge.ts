/**
 * Hedged attempts (project setting `hedging`, docs/routing-and-cache.md "Hedged requests"): when
 * an attempt has not answered by its hedge delay (the provider's p95 time to first token, or
 * HEDGE_AFTER_MS), the next candidate of the plan starts as well. The first to answer wins; the
 * other is cancelled and recorded as the hedge's price: nothing when it was cancelled before its
 * answer (the usual case: the provider stops before generating), else what it had produced (a
 * stream's prompt, a whole non-streamed answer). Without hedging this is one plain attempt.
 */
import type { Env } from "../../env";
import type { ChatRequest } from "../../providers/types";
import type { Candidate } from "../../routing/candidates";
import type { RequestProbe } from "../../lib/probe";
import type { RequestTimeouts } from "../../routing/timeouts";
import { runAttempt, timeoutsFor, type AttemptResult } from "./attempt";
import { estimatedUsage } from "./model-facts";
import { priceUsage } from "./response";

/** An attempt under way. */
export interface Running {
  cand: Candidate;
  startedAt: number;
  result: Promise<AttemptResult>;
  /** Cancels it (the other attempt won); not a client abort. */
  stop(): void;
}

/** How an attempt of the race ended; attempts come in the order they ended, a winner last. */
export interface Settled {
  cand: Candidate;
  result: AttemptResult;
  /**
   * Its share of the request's upstream time (x-gateway-overhead-ms): attempts of a race overlap,
   * so each counts from the end of the one before (the first from its start).
   */
  spanMs: number;
  /** Cancelled because the other attempt answered first. */
  loser?: { latencyMs: number; costPico: bigint };
}

export interface HedgeInput {
  env: Env;
  req: ChatRequest;
  stream: boolean;
  /** The client's signal: a client that goes away aborts every attempt. */
  signal: AbortSignal | undefined;
  timeouts: RequestTimeouts;
  promptTokens: number;
  /** The request's path-timing hook (src/lib/probe.ts). */
  probe?: RequestProbe | undefined;
}

export function startAttempt(i: HedgeInput, cand: Candidate): Running {
  // Only a race stops an attempt (`runHedged`, hedging on); without one the client's signal is enough.
  const ctl = i.timeouts.hedging ? new AbortController() : null;
  const signal = ctl && i.signal ? AbortSignal.any([i.signal, ctl.signal]) : (ctl?.signal ?? i.signal);
  return { cand, startedAt: Date.now(), result: runAttempt(i.env, i.req, cand, i.stream, signal, i.timeouts, i.probe), stop: () => ctl?.abort() };
}

/** A result nobody will use still holds its upstream stream open. */
function release(r: AttemptResult): void {
  if (r.ok && r.kind === "stream") {
    r.abort.abort();
    void r.iterator.return?.()?.catch(() => undefined);
  }
}

/** What a loser cost: an answer it already had (whole, or a stream's prompt), else nothing. */
function loserCost(i: HedgeInput, cand: Candidate, r: AttemptResult | null): bigint {
  if (!r?.ok || cand.free) return 0n;
  const usage = r.kind === "json" ? r.parsed.usage : estimatedUsage(i.promptTokens, "");
  return priceUsage(usage, cand.mapping.pricing).cost.total;
}

/** The value of `p` if it has already settled, else null (one turn of the microtask queue). */
async function ifSettled<T>(p: Promise<T>): Promise<T | null> {
  const pending = Symbol("pending");
  const v = await Promise.race([p, Promise.resolve(pending)]);
  return v === pending ? null : (v as T);
}

/**
 * Awaits `first`; with hedging on and `next` given, starts `next` once `first` is late and returns
 * every attempt that ended, the winner (if any) last.
 */
export async function runHedged(i: HedgeInput, first: Running, next: Candidate | undefined): Promise<Settled[]> {
  const delay = next && i.timeouts.hedging ? timeoutsFor(i.env, i.req, first.cand, i.stream, i.timeouts).hedgeAfterMs : null;
  const alone = (result: AttemptResult): Settled[] => [{ cand: first.cand, result, spanMs: result.upstreamMs }];
  if (delay === null || !next) return alone(await first.result);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), Math.max(0, delay - (Date.now() - first.startedAt)))));
  const early = await Promise.race([first.result, late]);
  clearTimeout(timer);
  if (early) return alone(early);
  if (i.signal?.aborted) return alone(await first.result);

  const runs = [first, startAttempt(i, next)];
  const ended = runs.map((run, k) => run.result.then((result) => ({ k, result })));
  const open = new Set([0, 1]);
  const out: Settled[] = [];
  let mark = first.startedAt;
  const span = (): number => {
    const now = Date.now();
    const ms = now - mark;
    mark = now;
    return ms;
  };
  while (open.size) {
    const { k, result } = await Promise.race([...open].map((j) => ended[j]!));
    open.delete(k);
    const run = runs[k]!;
    // An answer, or a failure that ends the request (the caller's own fault): the other stops.
    if (!result.ok && result.failure.retryable) {
      out.push({ cand: run.cand, result, spanMs: span() });
      continue;
    }
    for (const j of open) {
      const other = runs[j]!;
      const already = await ifSettled(other.result);
      other.stop();
      if (already) release(already);
      else void other.result.then(release, () => undefined);
      const latencyMs = Date.now() - other.startedAt;
      out.push({ cand: other.cand, result: already ?? { ok: false, failure: cancelled, upstreamMs: latencyMs }, spanMs: 0, loser: { latencyMs, costPico: loserCost(i, other.cand, already) } });
    }
    out.push({ cand: run.cand, result, spanMs: span() });
    break;
  }
  return out;
}

const cancelled = { kind: "network", status: 0, message: "cancelled: the hedged attempt answered first", errorType: "hedge_cancelled", retryable: false, providerFault: false } as const;

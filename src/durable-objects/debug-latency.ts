/**
 * Bench instrumentation (`npm run bench -- --do-latency N`), inert unless configured, never in
 * production, and left out of a deployed bundle (`__BENCH_INSTRUMENTS__`, src/build-flags.d.ts):
 *  - DO_LATENCY_MS: the budget objects (KeyState, OrgCredits) wait this long before answering an
 *    admission or settlement call, simulating an object on another continent;
 *  - DEBUG_DO_CALLS=1: chat responses carry `x-gateway-do-calls`, the number of budget-object
 *    calls this isolate made so far (the bench divides it by the requests it sent).
 */
import type { Env } from "../env";
import { envVar, isProduction } from "../env";

let calls = 0;

/** Counts one call to a budget object from this isolate. */
export const countDoCall = (): void => {
  if (__BENCH_INSTRUMENTS__) calls++;
};

/** Budget-object calls this isolate made so far (tests and the bench header). */
export const doCallsSoFar = (): number => calls;

/** Calls made so far, when DEBUG_DO_CALLS is on (else null). */
export const doCallsHeader = (env: Env): string | null =>
  __BENCH_INSTRUMENTS__ && !isProduction(env) && envVar(env, "DEBUG_DO_CALLS") === "1" ? String(calls) : null;

/** The simulated round trip of a budget object, or null when there is none. */
export function simulatedLatency(env: Env): Promise<void> | null {
  if (!__BENCH_INSTRUMENTS__ || isProduction(env)) return null;
  const ms = Number(envVar(env, "DO_LATENCY_MS"));
  return Number.isFinite(ms) && ms > 0 ? new Promise((r) => setTimeout(r, ms)) : null;
}

/**
 * Early upstream calls (docs/admission.md, "The first byte does not wait for the objects"): the
 * first attempt of a request starts while its admission is still being asked, so the budget
 * objects' round trip hides behind the provider's time to first token. Nothing of it reaches the
 * client before admission answered: the pipeline (execute.ts) awaits the admission before it uses
 * the attempt's result. A refused admission (or a newer key version, a refused credit reservation
 * for a credit-paid candidate) cancels the call: its upstream request is aborted, it is recorded in
 * the request's log row (`routing[].error_type = "early_cancelled"`, cost 0: not billed to the key)
 * and counted in this isolate (the operator's exposure).
 *
 * The exposure is bounded per isolate and key: at most one early call of a key is in doubt (started,
 * admission not answered yet) at a time, and after a refusal of the key (or of its organization's
 * credits) no early call starts for it until one of its requests is admitted again. So a key that
 * is disabled, rolled, deleted or at its limit costs at most one cancelled early call per isolate
 * per state change.
 */
import type { Env } from "../../env";
import type { ChatRequest } from "../../providers/types";
import type { Candidate } from "../../routing/candidates";
import { countCancelledEarly } from "../../lib/debug-world";
import { runAttempt, type AttemptResult } from "./attempt";

const MAX_ENTRIES = 10_000;
/** Keys (`key:<id>`) and organizations (`org:<id>`) whose last admission answer was a refusal. */
const refused = new Set<string>();
/** Keys with an early call in doubt. */
const inDoubt = new Set<string>();
let cancelledTotal = 0;

const keyName = (keyId: string) => `key:${keyId}`;
const orgName = (orgId: string) => `org:${orgId}`;

/** Whether a request of this key may start its first attempt before admission answered. */
export function earlyAllowed(keyId: string, orgId: string, creditPaid: boolean): boolean {
  return !inDoubt.has(keyName(keyId)) && !refused.has(keyName(keyId)) && !(creditPaid && refused.has(orgName(orgId)));
}

function mark(name: string, wasRefused: boolean): void {
  if (!wasRefused) {
    refused.delete(name);
    return;
  }
  if (refused.size >= MAX_ENTRIES) refused.clear();
  refused.add(name);
}

/** Records the key's admission answer: a refusal stops early calls for it until it is admitted again. */
export const noteKeyAnswer = (keyId: string, wasRefused: boolean): void => mark(keyName(keyId), wasRefused);
/** The same for the organization's credit reservation (credit-paid candidates only). */
export const noteCreditAnswer = (orgId: string, wasRefused: boolean): void => mark(orgName(orgId), wasRefused);

/** Early calls cancelled by this isolate so far (tests). */
export const cancelledEarlyCalls = (): number => cancelledTotal;

export interface EarlyCall {
  cand: Candidate;
  startedAt: number;
  /** The attempt's result; use it only once admission admitted the request. */
  result: Promise<AttemptResult>;
  /** Admission answered (admitted or not): the key's slot is free again. */
  settle(): void;
  /** Admission refused (or the call no longer fits the request): aborts it, counts it. */
  cancel(): void;
}

/**
 * Starts `cand`'s attempt now. `clientSignal` (the client went away) aborts it like any attempt;
 * the caller tells a client abort from a cancel by that signal.
 */
export function startEarly(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, keyId: string, clientSignal?: AbortSignal): EarlyCall {
  const name = keyName(keyId);
  inDoubt.add(name);
  const ctl = new AbortController();
  if (clientSignal?.aborted) ctl.abort();
  else clientSignal?.addEventListener("abort", () => ctl.abort(), { once: true });
  const result = runAttempt(env, req, cand, stream, ctl.signal);
  let settled = false;
  let cancelled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    inDoubt.delete(name);
  };
  return {
    cand,
    startedAt: Date.now(),
    result,
    settle,
    cancel() {
      settle();
      if (cancelled) return;
      cancelled = true;
      cancelledTotal++;
      countCancelledEarly();
      ctl.abort();
      // A stream that already produced its first event holds its own upstream request open.
      result
        .then((r) => {
          if (r.ok && r.kind === "stream") {
            r.abort.abort();
            void r.iterator.return?.();
          }
        })
        .catch(() => undefined);
    },
  };
}

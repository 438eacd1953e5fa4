/**
 * The state of one chat request shared by the pipeline's steps (execute.ts, admit.ts, serve.ts),
 * and how a request that ends without an upstream answer is logged and settled.
 */
import type { GatewayRequest } from "../middleware/gateway-request";
import type { KeyContext } from "../../context/key-context";
import type { ApiError } from "../../errors/api-error";
import type { RoutingAttempt } from "../../db/schema";
import type { ChatRequest } from "../../providers/types";
import { queueSettlement, type RequestCost } from "../../billing/settle";
import { estimateUpperBound } from "../../billing/estimate";
import type { Candidate } from "../../routing/candidates";
import { writeRequestLog } from "../../usage/log-queue";
import { queueBodies } from "../../usage/body-batch";
import { conversationOf, type TraceExtra } from "../../usage/conversation";
import type { RequestLogInput } from "../../usage/request-log";
import { boundTarget } from "./model-facts";
import { newId } from "../../lib/ids";
import { splitCost } from "./response";

/** `auth` is resolved but NOT yet admitted: admitKey happens here. */
export interface ChatExecutionInput extends GatewayRequest {
  /** x-no-cache, x-no-fallback, ... */
  headers: Headers;
  /** Raw JSON; validated inside. */
  body: unknown;
  /**
   * A dialect front door (Messages, Responses): the requested model answers under the caller's own
   * spelling of it, as those APIs echo it; a fallback model (`models`) still under its own id.
   */
  echoRequestedModel?: boolean;
}


/** State shared by the steps of one request. */
export interface Run {
  input: ChatExecutionInput;
  auth: KeyContext;
  startedAt: number;
  logId: string;
  reservationId: string | null;
  /** Credit reservation in the organization's OrgCredits object (credit-paid candidates only). */
  creditsReservationId: string | null;
  admitted: boolean;
  requestedModel: string;
  requestedProvider: string | null;
  /** Canonical id of the requested model once resolved (analytics key of failures). */
  canonicalModel: string | null;
  upstreamMs: number;
  /** The log row of this request is already queued. */
  logged: boolean;
  /** An early upstream call cancelled after admission answered (logged with the request, not billed). */
  cancelledEarly: RoutingAttempt | null;
  /** Cancels the early call when the pipeline ends without taking it (set once admitted). */
  dropEarly: (() => void) | null;
  /** The answer as a JSON completion's `choices`, kept for a project with `logBodies` (src/usage/bodies.ts). */
  answer: unknown;
  /** Resolves once the request's record is durable (set by `finishRequest`); the answer's last byte waits for it. */
  durable: Promise<void>;
  /** Admission and the response cache read, for the request page's timeline (src/usage/conversation.ts). */
  trace: Pick<TraceExtra, "admission" | "cacheRead">;
}

/** A request's state before its first step: nothing reserved, admitted, logged or answered yet. */
export function newRun(input: ChatExecutionInput, requestedModel: string): Run {
  return {
    input,
    auth: input.auth,
    startedAt: Date.now(),
    logId: newId("log"),
    reservationId: null,
    creditsReservationId: null,
    admitted: false,
    requestedModel,
    requestedProvider: null,
    canonicalModel: null,
    upstreamMs: 0,
    logged: false,
    cancelledEarly: null,
    dropEarly: null,
    answer: null,
    durable: Promise.resolve(),
    trace: {},
  };
}

/**
 * Settles the reservation in the key's DO, which also takes the log row and the credit debit into
 * its outbox in the same storage write (logged and charged together). `run.durable` resolves once
 * that write is done: the serving code releases the answer's last byte after it (serve.ts).
 */
export function finishRequest(run: Run, entry: RequestLogInput, cost: RequestCost = { totalPico: 0n, creditsPico: 0n }): void {
  const { env, waitUntil } = run.input;
  const trace: TraceExtra = { ...conversationOf(run.input.headers, run.input.body), ...run.trace };
  const withTrace: RequestLogInput = Object.keys(trace).length ? { ...entry, extra: { ...(entry.extra ?? {}), ...trace } } : entry;
  const bodyBatch = queueBodies(env, waitUntil, {
    auth: run.auth,
    logId: run.logId,
    requestId: run.input.requestId,
    createdAt: run.startedAt,
    request: run.input.body,
    response: run.answer ?? { error: { message: withTrace.errorMessage ?? null, type: withTrace.errorType ?? null, status: withTrace.statusCode } },
  });
  const log: RequestLogInput = bodyBatch ? { ...withTrace, bodyBatch } : withTrace;
  if (!run.admitted) {
    waitUntil(writeRequestLog(env, log));
    return;
  }
  const settling = queueSettlement(env, run.auth, run.reservationId, cost, log, run.creditsReservationId);
  run.durable = settling.durable;
  // One waitUntil for both (each call costs the runtime about as much as the settlement's own JS);
  // `done` may settle before `durable` when one of its parts fails, so both are named.
  waitUntil(Promise.all([settling.durable, settling.done]));
}

/**
 * A 4xx/5xx answered by the gateway after authentication: log row, release the reservation.
 * Attributed to the provider and canonical model of the last attempt (analytics rank failures
 * under them); with no attempt, to the canonical model and no provider (`unknown`).
 */
export function recordRejection(run: Run, err: ApiError, routing: RoutingAttempt[] = [], streamed = false): void {
  run.logged = true;
  const last = routing[routing.length - 1];
  finishRequest(run, {
    ...baseLog(run),
    usedModel: last?.model ?? run.canonicalModel,
    usedProvider: last?.provider ?? null,
    usedRegion: last?.region ?? null,
    statusCode: err.status,
    errorType: err.code,
    errorMessage: err.message,
    routing,
    streamed,
  });
}

export function baseLog(run: Run): Pick<RequestLogInput, "logId" | "requestId" | "auth" | "sourceApp" | "requestedModel" | "requestedProvider" | "createdAt" | "latencyMs"> {
  return {
    logId: run.logId,
    requestId: run.input.requestId,
    auth: run.auth,
    sourceApp: run.input.sourceApp,
    requestedModel: run.requestedModel,
    requestedProvider: run.requestedProvider,
    createdAt: run.startedAt,
    latencyMs: Date.now() - run.startedAt,
  };
}

/**
 * The client went away before an answer: the upstream call (if one was under way) is already
 * aborted. The request is logged (`client_aborted`) and billed: the provider reported nothing, so
 * an upstream call that had started is billed at its reservation bound for that candidate (the
 * provider may bill what it generated), one that had not costs nothing. The reservation is
 * released in the same settlement. Status 499 (nobody reads it).
 */
export function clientGone(run: Run, cand: Candidate, req: ChatRequest, routing: RoutingAttempt[], stream: boolean, upstreamStarted: boolean): Response {
  run.logged = true;
  const total = upstreamStarted && !cand.free ? estimateUpperBound(req, [boundTarget(req, cand)]) : 0n;
  const { creditsPico, byokPico } = splitCost(total, cand.credential.source);
  finishRequest(
    run,
    {
      ...baseLog(run),
      usedModel: upstreamStarted ? cand.modelId : null,
      usedProvider: upstreamStarted ? cand.providerId : null,
      statusCode: 499,
      errorType: "client_aborted",
      errorMessage: "The client closed the connection before the answer.",
      clientAborted: true,
      streamed: stream,
      costPico: total,
      creditsCostPico: creditsPico,
      byokCostPico: byokPico,
      routing,
    },
    { totalPico: total, creditsPico },
  );
  return new Response(null, { status: 499 });
}

export function attemptRecord(run: Run, cand: Candidate, status: number, succeeded: boolean, latencyMs: number, apiKeyHash: string | undefined, errorType?: string): RoutingAttempt {
  const rec: RoutingAttempt = {
    provider: cand.providerId,
    model: cand.modelId,
    status_code: status,
    succeeded,
    credentialSource: cand.credential.source,
    logId: run.logId,
    latency_ms: latencyMs,
    // When it started, in ms from the request's start (it is recorded as soon as it ended or answered).
    start_ms: Math.max(0, Date.now() - run.startedAt - latencyMs),
  };
  if (apiKeyHash) rec.apiKeyHash = apiKeyHash;
  if (cand.region) rec.region = cand.region;
  if (errorType) rec.error_type = errorType;
  if ("providerKey" in cand.credential) {
    rec.providerKeyId = cand.credential.providerKey.id;
    if (cand.credential.providerKey.label) rec.providerKeyLabel = cand.credential.providerKey.label;
  }
  return rec;
}

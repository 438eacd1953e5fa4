/**
 * `POST /v1/chat/completions` end to end, shared by the HTTP route and the MCP `chat` tool.
 *
 * validate -> model id -> candidates (capabilities, compliance, credentials, IAM) -> admitKey and,
 * for credit-paid candidates, admitCredits (the key's and the organization's budget objects, asked
 * at the same time; docs/admission.md), and while they answer: the response cache read and the
 * first attempt (an early call, early.ts; nothing released before admission answered, cancelled if
 * it refuses) -> ranked attempts with failover -> OpenAI JSON or SSE. Everything after the answer (request log, settlement, live metrics, cache
 * write) runs in waitUntil. A client that goes away (request signal) aborts the upstream and is
 * settled like any other outcome.
 */
import type { GatewayRequest } from "../middleware/gateway-request";
import type { KeyContext } from "../../auth/key-context";
import { admitKey, checkKey } from "../../auth/gateway-key";
import { ApiError } from "../../errors/api-error";
import type { RoutingAttempt } from "../../db/schema";
import type { ChatRequest, NormalizedUsage, StreamEvent } from "../../providers/types";
import { queueSettlement, renewLeasesEarly, type RequestCost } from "../../billing/settle";
import { estimateUpperBound } from "../../billing/estimate";
import { newId } from "../../lib/ids";
import { parseChatRequest } from "./schema";
import type { ResolvedModel } from "../../routing/parse-model-id";
import type { Candidate, RequestNeeds, Selection } from "../../routing/candidates";
import { resolveFallbacks, selectWithFallbacks } from "../../routing/fallback-models";
import { isDecisiveAttempt } from "../../routing/order";
import { withAnotherKey } from "../../routing/key-choice";
import { maybeRefreshMetrics, reportAttempts } from "../../routing/live-metrics";
import type { AttemptSample } from "../../routing/metrics";
import { attemptStatus, finalError, type AttemptFailure } from "../../routing/failover";
import { admitCredits, releaseCredits } from "../../billing/credits";
import { doCallsHeader } from "../../durable-objects/debug-latency";
import { pathCallsHeader, pathTimingHeader, traceMark } from "../../lib/debug-world";
import { cacheKey, isCacheable, readCache, writeCache, type CachedAnswer } from "../../cache/response-cache";
import { writeRequestLog, type RequestLogInput } from "../../usage/request-log";
import { runAttempt, upstreamTimeoutMs } from "./attempt";
import { boundTarget, estimatedUsage, isCreditPaid, recordSample, requestedModelOf, requestedProviderOf, resolve, responseModelOf } from "./model-facts";
import { noteCreditAnswer, noteKeyAnswer, planFor, startBeforeAdmission, type BeforeAdmission, type EarlyCall } from "./early";
import { completionJson, newCompletionId, priceUsage, splitCost, usageChunkJson, type ChatMetadata } from "./response";
import { replayIterator, startSseStream, writeStallMs, type StreamOutcome } from "./stream";

/** `auth` is resolved but NOT yet admitted: admitKey happens here. */
export interface ChatExecutionInput extends GatewayRequest {
  /** x-no-cache, x-no-fallback, ... */
  headers: Headers;
  /** Raw JSON; validated inside. */
  body: unknown;
}

/** State shared by the steps of one request. */
interface Run {
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
}

export async function executeChatCompletion(input: ChatExecutionInput): Promise<Response> {
  const run: Run = {
    input,
    auth: input.auth,
    startedAt: Date.now(),
    logId: newId("log"),
    reservationId: null,
    creditsReservationId: null,
    admitted: false,
    requestedModel: requestedModelOf(input.body),
    requestedProvider: null,
    canonicalModel: null,
    upstreamMs: 0,
    logged: false,
    cancelledEarly: null,
  };
  traceMark(input.env, "exec");
  try {
    return await execute(run);
  } catch (err) {
    if (err instanceof ApiError) {
      if (!run.logged) recordRejection(run, err, run.cancelledEarly ? [run.cancelledEarly] : []);
    } else if (!run.logged) {
      // A bug: still log the request (as the generic 500 onError renders) and release the reservation.
      recordRejection(run, new ApiError(500, "Internal server error", { type: "api_error", code: "internal_error" }), run.cancelledEarly ? [run.cancelledEarly] : []);
    }
    throw err;
  }
}

const logSettleError = (err: unknown) => console.error("settlement failed", err instanceof Error ? err.message : String(err));

/**
 * Off the hot path: settle the reservation in the key's DO, which also takes the log row and the
 * credit debit into its outbox in the same storage write (logged and charged together).
 */
function finishRequest(run: Run, log: RequestLogInput, cost: RequestCost = { totalPico: 0n, creditsPico: 0n }): void {
  const { env, waitUntil } = run.input;
  if (!run.admitted) {
    waitUntil(writeRequestLog(env, log));
    return;
  }
  waitUntil(queueSettlement(env, run.auth, run.reservationId, cost, log, run.creditsReservationId).catch(logSettleError));
}

/**
 * A 4xx/5xx answered by the gateway after authentication: log row, release the reservation.
 * Attributed to the provider and canonical model of the last attempt (analytics rank failures
 * under them); with no attempt, to the canonical model and no provider (`unknown`).
 */
function recordRejection(run: Run, err: ApiError, routing: RoutingAttempt[] = [], streamed = false): void {
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

function baseLog(run: Run): Pick<RequestLogInput, "logId" | "requestId" | "auth" | "sourceApp" | "requestedModel" | "requestedProvider" | "createdAt" | "latencyMs"> {
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
 * Body and model checks that come before admission. A request they refuse still asks the key's
 * state first, so a dead key or one at its limit answers 401 whatever its body (the key's state
 * answers first); valid requests pay nothing extra. When that answer brings a newer context (a
 * custom provider or model created a moment ago, issue 22), the request is judged again on it:
 * the isolate's cached context may prove a model known, never refuse one.
 */
async function parseOrGate(run: Run): Promise<Parsed> {
  try {
    return parseOnce(run);
  } catch (err) {
    if (!(err instanceof ApiError && err.status < 500)) throw err;
    const cached = run.auth;
    run.auth = await checkKey(run.input.env, cached, { spending: true });
    if (run.auth === cached) throw err;
    return parseOnce(run);
  }
}

/** The validated request, its model and its fallback models (`models`) as this key resolves them. */
interface Parsed { req: ChatRequest; resolved: ResolvedModel; fallbacks: ResolvedModel[] }

function parseOnce(run: Run): Parsed {
  const req = parseChatRequest(run.input.body);
  run.requestedModel = req.model;
  const resolved = resolve(run.auth, req);
  run.requestedProvider = requestedProviderOf(resolved);
  run.canonicalModel = responseModelOf(resolved);
  return { req, resolved, fallbacks: resolveFallbacks(run.auth, req, resolved) };
}

/** Cancels an early call admission did not let through: recorded with the request (cost 0), never released. */
function cancelEarly(run: Run, call: EarlyCall, routing: RoutingAttempt[]): void {
  call.cancel();
  const rec = attemptRecord(run, call.cand, 499, false, Date.now() - call.startedAt, undefined, "early_cancelled");
  run.cancelledEarly = rec;
  routing.push(rec);
}

async function execute(run: Run): Promise<Response> {
  const { env, waitUntil, headers } = run.input;
  const parsed = await parseOrGate(run);
  const req = parsed.req;
  let resolved = parsed.resolved;
  let fallbacks = parsed.fallbacks;
  let selection: Selection = selectWithFallbacks(env, run.auth, resolved, fallbacks, req, run.input.clientIp, run.input.callerContinent);
  maybeRefreshMetrics(env, waitUntil);
  const stream = req.stream === true;
  const keyId = run.auth.key.id;

  // Admission: the key's spend reservation (a true upper bound) and, for credit-paid candidates,
  // the organization's credit reservation; two objects, asked at the same time.
  const estimate = selection.ok ? estimateUpperBound(req, selection.candidates.map((c) => boundTarget(req, c))) : 0n;
  const creditBound = (list: readonly Candidate[]) => estimateUpperBound(req, list.filter(isCreditPaid).map((c) => boundTarget(req, c)));
  const orgId = run.auth.organization.id;
  let credit = selection.ok && selection.candidates.some(isCreditPaid) ? admitCredits(env, orgId, creditBound(selection.candidates)) : null;
  // Awaited below; a failure must not surface as an unhandled rejection meanwhile.
  credit?.catch(() => undefined);
  const keyAdmission = admitKey(env, run.auth, estimate);
  keyAdmission.catch(() => undefined);

  // While admission is asked (early.ts): the cache read and the first upstream call. Nothing of
  // either is released before admission answered.
  const early: BeforeAdmission = selection.ok ? await startBeforeAdmission(run.input, run.auth, req, selection, stream) : { key: null, hit: null, plan: null, call: null };
  traceMark(env, "early");
  const routing: RoutingAttempt[] = [];
  let admission: Awaited<ReturnType<typeof admitKey>>;
  try {
    admission = await keyAdmission;
  } catch (err) {
    noteKeyAnswer(keyId, true);
    if (early.call) cancelEarly(run, early.call, routing);
    if (credit) waitUntil(releaseCredits(env, orgId, credit));
    throw err;
  }
  noteKeyAnswer(keyId, false);
  traceMark(env, "admitted");
  early.call?.settle();
  run.admitted = true;
  run.reservationId = admission.reservationId;
  renewLeasesEarly(env, run.auth, waitUntil);
  let fresh = false;
  if (admission.context !== run.auth) {
    // Newer key version (rules, project, keys changed): decide again with the fresh context.
    fresh = true;
    run.auth = admission.context;
    resolved = resolve(run.auth, req);
    fallbacks = resolveFallbacks(run.auth, req, resolved);
    selection = selectWithFallbacks(env, run.auth, resolved, fallbacks, req, run.input.clientIp, run.input.callerContinent);
  }
  // Settled with the request, whatever happens next (released when nothing was credit-paid).
  const credits = credit ? await credit : null;
  traceMark(env, "credits");
  if (credits) noteCreditAnswer(orgId, !credits.ok);
  if (credits?.ok) run.creditsReservationId = credits.reservationId;
  // The early call was made under the old context, or is credit-paid and credits were refused.
  if (early.call && (fresh || !selection.ok || (isCreditPaid(early.call.cand) && !credits?.ok))) {
    cancelEarly(run, early.call, routing);
    early.call = null;
    early.plan = null;
  }
  // A fresh context selected new candidates: a plan made under the old one does not apply (with or
  // without an early call: none is started right after a refusal).
  if (fresh) early.plan = null;
  if (!selection.ok) throw selection.error;
  let candidates = selection.candidates;

  // Credit-paid candidates need a credit reservation (rarely asked only now: a fresh context added them).
  if (candidates.some(isCreditPaid)) {
    if (!credit) credit = admitCredits(env, orgId, creditBound(candidates));
    const c = credits ?? (await credit);
    if (c.ok) run.creditsReservationId = c.reservationId;
    else {
      candidates = candidates.filter((cand) => !isCreditPaid(cand));
      if (candidates.length === 0) throw c.error;
    }
  }

  const responseModel = responseModelOf(resolved);

  // Response cache: served only now, after auth, limits and access rules.
  let key: string | null = fresh ? null : early.key;
  if (fresh && isCacheable(run.auth, req, headers)) {
    key = await cacheKey(run.auth, req);
    const hit = await readCache(env, key);
    if (hit && (hit.kind === "stream") === stream) return serveCached(run, hit, responseModel);
  } else if (early.hit && (early.hit.kind === "stream") === stream) return serveCached(run, early.hit, responseModel);

  const plan = early.plan?.filter((c) => candidates.includes(c)) ?? planFor(env, headers, candidates, selection.needs);

  const samples: AttemptSample[] = [];
  let last: { failure: AttemptFailure; cand: Candidate } | null = null;
  const signal = run.input.signal;
  // A non-retryable 4xx is the request's own fault when the provider it was meant for says so:
  // the pinned provider, or the first choice of a canonical request. A fallback's own 4xx (a
  // provider that lists the model but refuses it) only rules that fallback out. With fallback
  // models (`models`) it ends that model's attempts, and the next model is tried.
  let doneModel = -1;
  const triedKeys = new Set<string>();
  for (const [i, cand] of plan.entries()) {
    if (cand.modelRank <= doneModel) continue;
    const earlyResult = i === 0 && early.call?.cand === cand ? early.call.result : null;
    if (!earlyResult && signal?.aborted) return clientGone(run, cand, req, routing, stream, false);
    const result = await (earlyResult ?? runAttempt(env, req, cand, stream, signal));
    run.upstreamMs += result.upstreamMs;
    if (!result.ok && signal?.aborted) {
      routing.push(attemptRecord(run, cand, 499, false, result.upstreamMs, result.apiKeyHash, "client_aborted"));
      return clientGone(run, cand, req, routing, stream, true);
    }
    if (!result.ok) {
      routing.push(attemptRecord(run, cand, attemptStatus(result.failure), false, result.upstreamMs, result.apiKeyHash, result.failure.errorType));
      recordSample(samples, cand, result.failure.providerFault ? "error" : "client_error", null, 0, null);
      last = { failure: result.failure, cand };
      // A key that is refused, rate limited or failing: another key of the same provider first.
      const sameProvider = withAnotherKey(cand, result.failure.status, triedKeys);
      if (sameProvider) {
        plan.splice(i + 1, 0, sameProvider);
        continue;
      }
      if (!result.failure.retryable && isDecisiveAttempt(plan, cand)) doneModel = cand.modelRank;
      continue;
    }
    routing.push(attemptRecord(run, cand, 200, true, result.upstreamMs, result.apiKeyHash));
    // A fallback model answers under its own id.
    const ctx: Served = { run, req, cand, routing, samples, responseModel: cand.modelRank > 0 ? cand.modelId : responseModel, cacheKey: key, needs: selection.needs };
    if (result.kind === "json") return serveJson(ctx, result.parsed, result.upstreamMs);
    return serveStream(ctx, result);
  }

  reportAttempts(env, waitUntil, samples);
  const failure = last ?? { failure: { kind: "network" as const, status: 0, message: "no provider could be tried", errorType: "no_provider", retryable: false, providerFault: false }, cand: plan[0]! };
  const error = finalError(failure.failure, routing.length, failure.cand.providerId);
  recordRejection(run, error, routing, stream);
  throw error;
}

/**
 * The client went away before an answer: the upstream call (if one was under way) is already
 * aborted. The request is logged (`client_aborted`) and billed: the provider reported nothing, so
 * an upstream call that had started is billed at its reservation bound for that candidate (the
 * provider may bill what it generated), one that had not costs nothing. The reservation is
 * released in the same settlement. Status 499 (nobody reads it).
 */
function clientGone(run: Run, cand: Candidate, req: ChatRequest, routing: RoutingAttempt[], stream: boolean, upstreamStarted: boolean): Response {
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

interface Served {
  run: Run;
  req: ChatRequest;
  cand: Candidate;
  routing: RoutingAttempt[];
  samples: AttemptSample[];
  responseModel: string;
  cacheKey: string | null;
  needs: RequestNeeds;
}

function attemptRecord(run: Run, cand: Candidate, status: number, succeeded: boolean, latencyMs: number, apiKeyHash: string | undefined, errorType?: string): RoutingAttempt {
  const rec: RoutingAttempt = {
    provider: cand.providerId,
    model: cand.modelId,
    status_code: status,
    succeeded,
    credentialSource: cand.credential.source,
    logId: run.logId,
    latency_ms: latencyMs,
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

function metadata(s: Pick<Served, "run" | "cand" | "routing">, underlying: string, cached: boolean): ChatMetadata {
  const { run, cand } = s;
  return {
    request_id: run.input.requestId,
    requested_model: run.requestedModel,
    requested_provider: run.requestedProvider ?? "",
    used_model: cand.modelId,
    used_provider: cand.providerId,
    used_region: cand.region,
    underlying_used_model: underlying,
    log_id: run.logId,
    organization_id: run.auth.organization.id,
    project_id: run.auth.project.id,
    discount: 0,
    cached,
    routing: s.routing,
  };
}

function responseHeaders(run: Run, contentType: string): Headers {
  const overhead = Math.max(0, Date.now() - run.startedAt - run.upstreamMs);
  const h = new Headers({ "content-type": contentType, "x-request-id": run.input.requestId, "x-gateway-overhead-ms": String(overhead) });
  const doCalls = doCallsHeader(run.input.env);
  if (doCalls !== null) h.set("x-gateway-do-calls", doCalls);
  const pathCalls = pathCallsHeader(run.input.env);
  if (pathCalls !== null) h.set("x-gateway-path-calls", pathCalls);
  const pathTiming = pathTimingHeader(run.input.env);
  if (pathTiming !== null) h.set("x-gateway-path-timing", pathTiming);
  if (contentType.startsWith("text/event-stream")) {
    h.set("cache-control", "no-cache");
    h.set("x-accel-buffering", "no");
  }
  return h;
}

/** Bills, logs and reports a finished request (all in waitUntil). */
function settleAndLog(s: Served, o: { usage: NormalizedUsage | null; totalPico: bigint; log: Partial<RequestLogInput>; ttftMs: number | null }): void {
  const { env, waitUntil } = s.run.input;
  const { creditsPico, byokPico } = splitCost(o.totalPico, s.cand.credential.source);
  finishRequest(
    s.run,
    {
      ...baseLog(s.run),
      usedModel: s.cand.modelId,
      usedProvider: s.cand.providerId,
      usedRegion: s.cand.region || null,
      statusCode: 200,
      usage: o.usage,
      costPico: o.totalPico,
      creditsCostPico: creditsPico,
      byokCostPico: byokPico,
      ttftMs: o.ttftMs,
      routing: s.routing,
      ...o.log,
    },
    { totalPico: o.totalPico, creditsPico },
  );
  reportAttempts(env, waitUntil, s.samples);
}

function serveJson(s: Served, parsed: import("../../providers/types").ParsedCompletion, upstreamMs: number): Response {
  const { run } = s;
  const priced = priceUsage(parsed.usage, s.cand.mapping.pricing);
  const underlying = parsed.upstreamModel ?? s.cand.mapping.externalId;
  const id = newCompletionId();
  const created = Math.floor(Date.now() / 1000);
  const body = completionJson({
    id,
    created,
    model: s.responseModel,
    choices: parsed.choices,
    usage: priced.json,
    metadata: metadata(s, underlying, false),
    systemFingerprint: parsed.systemFingerprint,
  });
  recordSample(s.samples, s.cand, "ok", null, parsed.usage.completionTokens, upstreamMs);
  settleAndLog(s, {
    usage: parsed.usage,
    totalPico: priced.cost.total,
    ttftMs: upstreamMs,
    log: { finishReason: parsed.choices[0]?.finish_reason ?? null, streamed: false },
  });
  if (s.cacheKey) {
    const now = Date.now();
    const answer: CachedAnswer = {
      kind: "json",
      choices: parsed.choices,
      provider: s.cand.providerId,
      model: s.cand.modelId,
      underlyingModel: underlying,
      region: s.cand.region || null,
      usage: parsed.usage,
      storedAt: now,
      expiresAt: now + run.auth.project.cacheDurationSeconds * 1000,
    };
    run.input.waitUntil(writeCache(run.input.env, s.cacheKey, answer));
  }
  return new Response(JSON.stringify(body), { status: 200, headers: responseHeaders(run, "application/json") });
}

function serveStream(
  s: Served,
  r: { first: StreamEvent; iterator: AsyncIterator<StreamEvent>; abort: AbortController; upstreamMs: number; target: { mapping: { externalId: string } } },
): Response {
  const { run } = s;
  const id = newCompletionId();
  const created = Math.floor(Date.now() / 1000);
  const ttftMs = r.upstreamMs;
  const underlying = r.target.mapping.externalId;
  const attempt = s.routing[s.routing.length - 1]!;

  const finish = async (o: StreamOutcome): Promise<Record<string, unknown>> => {
    if (o.status === "upstream_error") {
      attempt.succeeded = false;
      attempt.status_code = 502;
      attempt.error_type = o.error?.errorType ?? "stream_error";
      recordSample(s.samples, s.cand, "error", null, 0, null);
      const message = `${s.cand.providerId}: ${o.error?.message ?? "stream failed"}`;
      settleAndLog(s, {
        usage: null,
        totalPico: 0n, // upstream failures cost nothing
        ttftMs,
        log: { statusCode: 502, errorType: o.error?.errorType ?? "stream_error", errorMessage: message, streamed: true },
      });
      return { error: { message, type: "upstream_error", param: null, code: "upstream_error" } };
    }
    const usage = o.usage ?? estimatedUsage(s.needs.promptTokens, o.generatedText);
    const priced = priceUsage(usage, s.cand.mapping.pricing);
    recordSample(s.samples, s.cand, "ok", ttftMs, usage.completionTokens, o.generationMs);
    settleAndLog(s, {
      usage,
      totalPico: priced.cost.total,
      ttftMs,
      log: {
        streamed: true,
        clientAborted: o.status === "client_aborted",
        finishReason: o.finishReasons.get(0) ?? null,
        latencyMs: Date.now() - run.startedAt,
      },
    });
    if (o.status === "complete" && s.cacheKey) {
      const now = Date.now();
      run.input.waitUntil(
        writeCache(run.input.env, s.cacheKey, {
          kind: "stream",
          events: o.events,
          provider: s.cand.providerId,
          model: s.cand.modelId,
          underlyingModel: underlying,
          region: s.cand.region || null,
          usage,
          storedAt: now,
          expiresAt: now + run.auth.project.cacheDurationSeconds * 1000,
        }),
      );
    }
    return usageChunkJson({ id, created, model: s.responseModel, usage: priced.json, metadata: metadata(s, underlying, false) });
  };

  const body = startSseStream({
    completionId: id,
    created,
    model: s.responseModel,
    first: r.first,
    iterator: r.iterator,
    abort: r.abort,
    clientSignal: run.input.signal,
    idleTimeoutMs: upstreamTimeoutMs(run.input.env),
    writeStallMs: writeStallMs(run.input.env),
    waitUntil: run.input.waitUntil,
    finish,
  });
  return new Response(body, { status: 200, headers: responseHeaders(run, "text/event-stream; charset=utf-8") });
}

/** A cache hit: the stored answer, cost 0, `metadata.cached = true`, a log row with cached = 1. */
function serveCached(run: Run, hit: CachedAnswer, responseModel: string): Response {
  const { env, waitUntil } = run.input;
  const priced = priceUsage(hit.usage, null);
  const meta: ChatMetadata = {
    request_id: run.input.requestId,
    requested_model: run.requestedModel,
    requested_provider: run.requestedProvider ?? "",
    used_model: hit.model,
    used_provider: hit.provider,
    used_region: hit.region ?? "",
    underlying_used_model: hit.underlyingModel,
    log_id: run.logId,
    organization_id: run.auth.organization.id,
    project_id: run.auth.project.id,
    discount: 0,
    cached: true,
    routing: [],
  };
  finishRequest(run, {
    ...baseLog(run),
    usedModel: hit.model,
    usedProvider: hit.provider,
    usedRegion: hit.region,
    statusCode: 200,
    cached: true,
    streamed: hit.kind === "stream",
    usage: hit.usage,
    ttftMs: 0,
  });
  const id = newCompletionId();
  const created = Math.floor(Date.now() / 1000);
  if (hit.kind === "json") {
    const body = completionJson({ id, created, model: responseModel, choices: hit.choices, usage: priced.json, metadata: meta });
    return new Response(JSON.stringify(body), { status: 200, headers: responseHeaders(run, "application/json") });
  }
  const replay = replayIterator(hit.events);
  if (!replay) throw new ApiError(500, "Corrupt cache entry", { type: "api_error", code: "internal_error" });
  const body = startSseStream({
    completionId: id,
    created,
    model: responseModel,
    first: replay.first,
    iterator: replay.iterator,
    abort: new AbortController(),
    idleTimeoutMs: upstreamTimeoutMs(env),
    writeStallMs: writeStallMs(env),
    waitUntil,
    finish: () => Promise.resolve(usageChunkJson({ id, created, model: responseModel, usage: priced.json, metadata: meta })),
  });
  return new Response(body, { status: 200, headers: responseHeaders(run, "text/event-stream; charset=utf-8") });
}

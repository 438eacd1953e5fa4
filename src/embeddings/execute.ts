/**
 * `POST /v1/embeddings` end to end, the same steps as chat (src/routes/chat/execute.ts) for a
 * request that has no conversation: model id -> candidates (deactivation, compliance policy,
 * credential for the project's mode, IAM) -> admitKey (spend reservation) and, for credit-paid
 * candidates, the credit reservation, asked at the same time while the first attempt already runs
 * (an early call, src/billing/early-call.ts: nothing released before admission answered,
 * cancelled if it refuses) -> attempts in catalogue order with failover (src/routing/failover.ts)
 * -> cost from the prompt tokens -> settlement + request log (kind `embedding`) in waitUntil.
 */
import type { KeyContext } from "../context/key-context";
import { embeddingTokensUpperBound, tokenCost } from "../billing/estimate";
import { computeCost } from "../billing/cost";
import { queueSettlement, renewLeasesEarly, type RequestCost } from "../billing/settle";
import { toUsdNumber } from "../billing/money";
import { getProvider, isDeactivated, parseModelRef } from "../catalog";
import type { ModelDefinition, ProviderMapping } from "../catalog/types";
import type { RoutingAttempt } from "../db/schema";
import { ApiError, badRequest, permissionDenied } from "../errors/api-error";
import { newId } from "../lib/ids";
import { MalformedUpstreamError } from "../providers/errors";
import { emptyUsage } from "../providers/types";
import { resolveCredential } from "../routing/credentials";
import { doorEndpoints, type DoorEndpoint } from "../routing/door-endpoints";
import { DoorSamples } from "../routing/door-samples";
import { admitCreditCandidates } from "../billing/credits";
import { admitWithEarlyCall, type EarlyAdmitted } from "../billing/early-call";
import { attemptStatus, classifyHttp, finalError, malformedFailure, networkFailure, retryAfterSeconds, timeoutFailure, type AttemptFailure } from "../routing/failover";
import { redactCredential, upstreamTimeoutMs } from "../routes/chat/attempt";
import type { GatewayRequest } from "../routes/middleware/gateway-request";
import { writeRequestLog } from "../usage/log-queue";
import { queueBodies } from "../usage/body-batch";
import { compactBody, errorBody } from "../usage/body-shapes";
import type { RequestLogInput } from "../usage/request-log";
import { embeddingAdapterFor, toBase64Float32, type EmbeddingInput } from "./adapters";
import type { EmbeddingsRequest } from "./schema";

/** One endpoint of a mapping (src/routing/door-endpoints.ts). */
type Candidate = DoorEndpoint;

function selectCandidates(input: GatewayRequest, auth: KeyContext, model: ModelDefinition, pinned: ProviderMapping | null): Candidate[] {
  const now = Date.now();
  const policy = auth.organization.compliance;
  const mappings = (pinned ? [pinned] : model.mappings).filter((m) => {
    const provider = getProvider(m.providerId);
    if (!provider || !embeddingAdapterFor(provider.wireFormat)) return false;
    if (m.deactivatedAt && Date.parse(m.deactivatedAt) <= now) return false;
    return !((policy.noTraining && provider.trainsOnApiData) || (policy.deniedProviders ?? []).includes(m.providerId));
  });
  // Embeddings are judged by the chat rules (model, provider, pricing, IP, residency).
  const { endpoints, denial } = doorEndpoints(input.env, auth, { model, mappings, kind: "chat", clientIp: input.clientIp, caller: input.callerContinent });
  if (endpoints.length === 0) {
    if (denial) throw permissionDenied(denial);
    throw new ApiError(503, `No provider is available for '${model.id}' in this project (compliance policy, project mode or missing credentials).`, { type: "upstream_error", code: "no_provider_available" });
  }
  return endpoints;
}

function resolveModel(auth: KeyContext, id: string): { model: ModelDefinition; pinned: ProviderMapping | null } {
  const ref = parseModelRef(id.trim());
  if (ref.kind === "unknown") throw badRequest(`The model '${id}' does not exist. See GET /v1/models for available ids.`, "model", "model_not_found");
  if (ref.model.kind !== "embedding") throw badRequest(`The model '${ref.model.id}' is not an embedding model.`, "model", "model_not_embedding");
  if (isDeactivated(ref.model)) throw badRequest(`The model '${ref.model.id}' was deactivated on ${ref.model.deactivatedAt}.`, "model", "model_deactivated");
  if (ref.kind === "pinned" && auth.key.kind === "coding-plan") {
    throw badRequest("Coding-plan keys accept only canonical model ids (no 'provider/' prefix).", "model", "model_not_allowed");
  }
  return { model: ref.model, pinned: ref.kind === "pinned" ? ref.mapping : null };
}

type Attempt = { ok: true; vectors: number[][]; promptTokens: number; ms: number } | { ok: false; failure: AttemptFailure; ms: number };

/** One upstream attempt; `cancel` aborts it (an early call that admission refused). */
async function attempt(input: GatewayRequest, req: EmbeddingInput, model: ModelDefinition, cand: Candidate, cancel?: AbortSignal): Promise<Attempt> {
  const started = Date.now();
  const adapter = embeddingAdapterFor(cand.provider.wireFormat)!;
  const timeoutMs = upstreamTimeoutMs(input.env);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = cancel ? AbortSignal.any([timeout, cancel]) : timeout;
  const ms = () => Date.now() - started;
  let apiKey: string | undefined;
  try {
    const cred = await resolveCredential(input.env, cand.credential, cand.provider.baseUrl);
    apiKey = cred.apiKey;
    const target = { provider: cand.provider, mapping: cand.mapping, model, baseUrl: cred.baseUrl, apiKey: cred.apiKey, settings: cred.settings };
    // Redirects are never followed (docs/security.md): the place a redirect names never passed the
    // SSRF guard, and the request carries the credential. A 3xx is an upstream error. Every call
    // carries `redirect: "manual"` (its type says so).
    const { url, init } = adapter.buildCall(req, target, signal);
    const res = await fetch(url, init);
    if (res.status >= 300 && res.status < 400) {
      void res.body?.cancel();
      return { ok: false, failure: { ...networkFailure(`the provider answered with a redirect (HTTP ${res.status}); redirects are not followed`), errorType: "upstream_redirect" }, ms: ms() };
    }
    if (!res.ok) {
      const info = adapter.parseError(res.status, await res.text().catch(() => ""));
      return { ok: false, failure: classifyHttp(res.status, cand.credential.source, redactCredential(info.message, apiKey), info.type, retryAfterSeconds(res.headers.get("retry-after"))), ms: ms() };
    }
    const parsed = adapter.parseResponse(await res.json(), req);
    return { ok: true, ...parsed, ms: ms() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (timeout.aborted) return { ok: false, failure: timeoutFailure(timeoutMs), ms: ms() };
    if (err instanceof MalformedUpstreamError || err instanceof SyntaxError) return { ok: false, failure: malformedFailure(message), ms: ms() };
    return { ok: false, failure: networkFailure(redactCredential(`network error: ${message}`, apiKey)), ms: ms() };
  }
}

export async function executeEmbeddings(input: GatewayRequest, body: EmbeddingsRequest): Promise<Record<string, unknown>> {
  const startedAt = Date.now();
  let auth = input.auth;
  const logId = newId("log");
  const routing: RoutingAttempt[] = [];
  let reservationId: string | null = null;
  let creditsReservationId: string | null = null;
  let admitted = false;
  /** The record is durable (settle-commit.ts); the answer is returned only after it. */
  let durable: Promise<void> = Promise.resolve();
  const texts: EmbeddingInput["input"] = typeof body.input === "string" ? [body.input] : isTokenList(body.input) ? [body.input] : body.input;
  const req: EmbeddingInput = { input: texts, ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}), ...(body.user !== undefined ? { user: body.user } : {}) };
  const base = (): Omit<RequestLogInput, "statusCode"> => ({
    logId, requestId: input.requestId, auth, kind: "embedding", sourceApp: input.sourceApp, requestedModel: body.model,
    requestedProvider: body.model.includes("/") ? (body.model.split("/")[0] ?? null) : null, createdAt: startedAt, latencyMs: Date.now() - startedAt, routing,
  });
  const finish = (entry: RequestLogInput, cost: RequestCost = { totalPico: 0n, creditsPico: 0n }, answer?: unknown) => {
    const bodyBatch = queueBodies(input.env, input.waitUntil, { auth, logId, requestId: input.requestId, createdAt: startedAt, request: compactBody(body), response: answer === undefined ? errorBody(entry) : compactBody(answer) });
    const log: RequestLogInput = bodyBatch ? { ...entry, bodyBatch } : entry;
    if (!admitted) {
      input.waitUntil(writeRequestLog(input.env, log));
      return;
    }
    const settling = queueSettlement(input.env, auth, reservationId, cost, log, creditsReservationId);
    durable = settling.durable;
    input.waitUntil(settling.durable);
    input.waitUntil(settling.done);
  };

  const creditPaid = (c: Candidate) => c.credential.source === "credits";
  const carries = (c: Candidate) => !(texts.some((x) => typeof x !== "string") && c.provider.wireFormat !== "openai");
  let early: EarlyAdmitted<Attempt> | null = null;
  const samples = new DoorSamples();
  try {
    let { model, pinned } = resolveModel(auth, body.model);
    let candidates = selectCandidates(input, auth, model, pinned);
    // A true upper bound (bytes, as for chat prompts): the reservation covers what any candidate bills.
    const boundTokens = embeddingTokensUpperBound(req.input);
    const estimate = candidates.reduce((max, c) => {
      const v = tokenCost(c.mapping.pricing, boundTokens, 0);
      return v > max ? v : max;
    }, 0n);
    // The key's and (credit-paid candidates) the organization's reservations, asked at the same
    // time, while the first candidate's attempt already runs (nothing of it released before both answered).
    const first = candidates[0];
    const earlyCand = first && carries(first) ? first : null;
    const earlyModel = model;
    early = await admitWithEarlyCall<Attempt>(input.env, auth, {
      estimate,
      creditEstimate: candidates.some(creditPaid) ? estimate : null,
      early: earlyCand ? { creditPaid: creditPaid(earlyCand), run: (signal) => attempt(input, req, earlyModel, earlyCand, signal) } : null,
      onCancelled: (ms) => {
        if (earlyCand) routing.push({ provider: earlyCand.provider.id, model: earlyModel.id, status_code: 499, succeeded: false, credentialSource: earlyCand.credential.source, latency_ms: ms, error_type: "early_cancelled", ...regionOf(earlyCand) });
      },
      waitUntil: input.waitUntil,
    });
    admitted = true;
    reservationId = early.admission.reservationId;
    if (early.fresh) {
      auth = early.admission.context;
      ({ model, pinned } = resolveModel(auth, body.model));
      candidates = selectCandidates(input, auth, model, pinned);
    }
    // Credit-paid candidates reserve their bound in the organization's credits object (asked above,
    // unless a newer context brought them).
    if (early.credit?.ok) creditsReservationId = early.credit.reservationId;
    else if (early.credit) {
      candidates = candidates.filter((c) => !creditPaid(c));
      if (candidates.length === 0) throw early.credit.error;
    } else {
      const credit = await admitCreditCandidates(input.env, auth.organization.id, candidates, creditPaid, () => estimate);
      candidates = credit.candidates;
      creditsReservationId = credit.reservationId;
    }
    renewLeasesEarly(input.env, auth, input.waitUntil);

    let last: { failure: AttemptFailure; cand: Candidate } | null = null;
    for (const cand of candidates) {
      if (!carries(cand)) {
        routing.push({ provider: cand.provider.id, model: model.id, status_code: 400, succeeded: false, credentialSource: cand.credential.source, error_type: "unsupported_input", ...regionOf(cand) });
        continue;
      }
      const r = await ((cand === earlyCand ? early.take() : null) ?? attempt(input, req, model, cand));
      const rec: RoutingAttempt = { provider: cand.provider.id, model: model.id, status_code: r.ok ? 200 : attemptStatus(r.failure), succeeded: r.ok, credentialSource: cand.credential.source, latency_ms: r.ms, ...regionOf(cand) };
      if (!r.ok) rec.error_type = r.failure.errorType;
      routing.push(rec);
      samples.add(cand, model.id, r.ok ? "ok" : r.failure.providerFault ? "error" : "client_error", r.ms);
      if (!r.ok) {
        last = { failure: r.failure, cand };
        if (!r.failure.retryable) break;
        continue;
      }
      const usage = { ...emptyUsage(), promptTokens: r.promptTokens };
      const cost = computeCost(usage, cand.mapping.pricing).total;
      const creditsPico = cand.credential.source === "credits" ? cost : 0n;
      const answer = {
        object: "list",
        data: r.vectors.map((v, index) => ({ object: "embedding", index, embedding: body.encoding_format === "base64" ? toBase64Float32(v) : v })),
        model: model.id,
        usage: { prompt_tokens: r.promptTokens, total_tokens: r.promptTokens, cost: toUsdNumber(cost) },
        metadata: { request_id: input.requestId, log_id: logId, used_provider: cand.provider.id, used_model: model.id, used_region: cand.region, routing },
      };
      finish(
        { ...base(), usedModel: model.id, usedProvider: cand.provider.id, usedRegion: cand.region || null, statusCode: 200, usage, costPico: cost, creditsCostPico: creditsPico, byokCostPico: cost - creditsPico, ttftMs: r.ms },
        { totalPico: cost, creditsPico },
        { object: answer.object, data: r.vectors.map((v, index) => ({ index, embedding: v })), model: answer.model, usage: answer.usage },
      );
      await durable;
      return answer;
    }
    if (!last) throw badRequest("Token-array input is only accepted by OpenAI-compatible providers; send text.", "input", "unsupported_input");
    throw finalError(last.failure, routing.length, last.cand.provider.id);
  } catch (err) {
    early?.drop();
    const e = err instanceof ApiError ? err : new ApiError(500, "Internal server error", { type: "api_error", code: "internal_error" });
    finish({ ...base(), statusCode: e.status, errorType: e.code, errorMessage: e.message });
    throw err;
  } finally {
    samples.report(input.env, input.waitUntil, input.callerContinent);
  }
}

/** The routing record's `region` of an endpoint (none for a global one). */
const regionOf = (c: Candidate): { region?: string } => (c.region ? { region: c.region } : {});

const isTokenList = (v: EmbeddingsRequest["input"]): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number");

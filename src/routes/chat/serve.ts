/**
 * Serving an answer of the chat pipeline: an upstream JSON completion, an upstream stream, or a
 * response-cache hit, each with its metadata and headers, and its settlement, log row, live
 * metrics and cache write in waitUntil.
 */
import { ApiError } from "../../errors/api-error";
import type { RoutingAttempt } from "../../db/schema";
import type { ChatRequest, NormalizedUsage, ParsedCompletion, StreamEvent } from "../../providers/types";
import type { Candidate, RequestNeeds } from "../../routing/candidates";
import { reportAttempts } from "../../routing/live-metrics";
import type { AttemptSample } from "../../routing/metrics";
import { writeCache, type CachedAnswer } from "../../cache/response-cache";
import type { RequestLogInput } from "../../usage/request-log";
import { streamAnswer } from "../../usage/bodies";
import { upstreamTimeoutMs } from "./attempt";
import { estimatedUsage, recordSample } from "./model-facts";
import { completionJson, costOptionsOf, newCompletionId, priceUsage, splitCost, usageChunkJson, type ChatMetadata } from "./response";
import { replayIterator, startSseStream, writeStallMs, type StreamOutcome } from "./stream";
import { baseLog, finishRequest, type Run } from "./run";

export interface Served {
  run: Run;
  req: ChatRequest;
  cand: Candidate;
  routing: RoutingAttempt[];
  samples: AttemptSample[];
  responseModel: string;
  cacheKey: string | null;
  needs: RequestNeeds;
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

/**
 * An answer's own headers, as a plain record the Response takes its headers from: a `Headers`
 * object built first would be built and then copied into the Response's own.
 */
function responseHeaders(run: Run, contentType: string): Record<string, string> {
  const overhead = Math.max(0, Date.now() - run.startedAt - run.upstreamMs);
  const h: Record<string, string> = { "content-type": contentType, "x-request-id": run.input.requestId, "x-gateway-overhead-ms": String(overhead) };
  if (contentType.startsWith("text/event-stream")) {
    h["cache-control"] = "no-cache";
    h["x-accel-buffering"] = "no";
  }
  return h;
}

/**
 * A JSON answer, once the request's record is durable (src/billing/settle-commit.ts): a runtime
 * that dies after the answer then loses nothing that was answered. The answer waits whole (as
 * embeddings, images and moderations do) rather than sending its headers first and its body
 * after the commit: a JSON client reads nothing before the last byte, and a body held back in a
 * stream cost the runtime a stream, its writer and two writes per answer. The overhead header
 * counts the commit's wait: it is the gateway's time, and the answer leaves after it.
 */
async function afterRecord(run: Run, text: string): Promise<Response> {
  await run.durable;
  return new Response(text, { status: 200, headers: responseHeaders(run, "application/json") });
}

/** The fallback model (`models`) that served, kept with a cached answer so its replay names it too. */
const fallbackModelOf = (s: Served): string | undefined => (s.cand.modelRank > 0 ? s.cand.modelId : undefined);

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
  reportAttempts(env, waitUntil, s.samples, s.run.input.callerContinent ?? null);
}

export function serveJson(s: Served, parsed: ParsedCompletion, upstreamMs: number): Promise<Response> {
  const { run } = s;
  const priced = priceUsage(parsed.usage, s.cand.mapping.pricing, costOptionsOf(s.req));
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
  run.answer = { choices: parsed.choices };
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
      fallbackModel: fallbackModelOf(s),
      usage: parsed.usage,
      storedAt: now,
      expiresAt: now + run.auth.project.cacheDurationSeconds * 1000,
    };
    run.input.waitUntil(writeCache(run.input.env, s.cacheKey, answer));
  }
  return afterRecord(run, JSON.stringify(body));
}

export function serveStream(
  s: Served,
  r: { first: StreamEvent; iterator: AsyncIterator<StreamEvent>; abort: AbortController; upstreamMs: number; interChunkMs: number; deadlineAt: number | null; target: { mapping: { externalId: string } } },
): Response {
  const { run } = s;
  const id = newCompletionId();
  const created = Math.floor(Date.now() / 1000);
  const ttftMs = r.upstreamMs;
  const underlying = r.target.mapping.externalId;
  const attempt = s.routing[s.routing.length - 1]!;

  const finish = async (o: StreamOutcome): Promise<Record<string, unknown>> => {
    if (run.auth.project.logBodies) run.answer = streamAnswer(o.events);
    if (o.status === "upstream_error") {
      attempt.succeeded = false;
      attempt.status_code = 502;
      attempt.error_type = o.error?.errorType ?? "stream_error";
      recordSample(s.samples, s.cand, "error", null, 0, null);
      const message = `${s.cand.providerId}: ${o.error?.message ?? "stream failed"}`;
      // A stream that went silent (or outran the caller's timeout) after delivering part of its
      // answer is billed for that part, as a client that leaves mid-stream is: the provider charges
      // for what it generated, and the caller received it. Other failures after the first byte
      // (a cut connection, an error event, a malformed stream) cost nothing.
      const delivered = o.error?.errorType === "timeout" && o.generatedText.length > 0 ? (o.usage ?? estimatedUsage(s.needs.promptTokens, o.generatedText)) : null;
      settleAndLog(s, {
        usage: delivered,
        totalPico: delivered ? priceUsage(delivered, s.cand.mapping.pricing, costOptionsOf(s.req)).cost.total : 0n,
        ttftMs,
        log: { statusCode: 502, errorType: o.error?.errorType ?? "stream_error", errorMessage: message, streamed: true },
      });
      await run.durable;
      return { error: { message, type: "upstream_error", param: null, code: "upstream_error" } };
    }
    const usage = o.usage ?? estimatedUsage(s.needs.promptTokens, o.generatedText);
    const priced = priceUsage(usage, s.cand.mapping.pricing, costOptionsOf(s.req));
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
          fallbackModel: fallbackModelOf(s),
          usage,
          storedAt: now,
          expiresAt: now + run.auth.project.cacheDurationSeconds * 1000,
        }),
      );
    }
    // The final event leaves once the record is durable (run.ts): an answered request is never unbilled.
    await run.durable;
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
    idleTimeoutMs: r.interChunkMs,
    deadlineAt: r.deadlineAt,
    writeStallMs: writeStallMs(run.input.env),
    waitUntil: run.input.waitUntil,
    finish,
  });
  return new Response(body, { status: 200, headers: responseHeaders(run, "text/event-stream; charset=utf-8") });
}

/**
 * A cache hit: the stored answer, cost 0, `metadata.cached = true`, a log row with cached = 1. It
 * answers under the model that produced it: a fallback's id when one served (as the first answer did).
 */
export function serveCached(run: Run, hit: CachedAnswer, requestedModel: string): Response | Promise<Response> {
  const { env, waitUntil } = run.input;
  const responseModel = hit.fallbackModel ?? requestedModel;
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
  if (run.auth.project.logBodies) run.answer = hit.kind === "json" ? { choices: hit.choices } : streamAnswer(hit.events);
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
    return afterRecord(run, JSON.stringify(body));
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
    finish: () => run.durable.then(() => usageChunkJson({ id, created, model: responseModel, usage: priced.json, metadata: meta })),
  });
  return new Response(body, { status: 200, headers: responseHeaders(run, "text/event-stream; charset=utf-8") });
}

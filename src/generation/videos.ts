/**
 * Video generation (`POST /v1/videos`, `GET /v1/videos/{id}`) and the gateway-managed content
 * proxy `GET /v1/videos/logs/{log_id}/content` (spec 4.1).
 *
 * A job is a `request_logs` row (kind `video`); its id is the video id callers see, and `extra`
 * holds the upstream job id, status, content type and (once copied) the R2 object key. The cost
 * is known up front (catalogue `per_second[size] * seconds`) and settled when the job is accepted.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { getProvider, isDeactivated, parseModelRef } from "../catalog";
import type { ProviderMapping } from "../catalog/types";
import { ApiError, badRequest, notFound, permissionDenied } from "../errors/api-error";
import { renewLeasesEarly, settleRequest } from "../billing/settle";
import { admitCredits } from "../billing/credits";
import { admitWithEarlyCall } from "../billing/early-call";
import { formatUsd, parseUsd, toUsdNumber, type Pico } from "../billing/money";
import { getDb } from "../db/client";
import { requestLogs, type RoutingAttempt } from "../db/schema";
import { sendLogRow } from "../usage/log-queue";
import { REFUND_SUFFIX, refundRecordJson } from "../usage/request-log";
import { newId } from "../lib/ids";
import { isRecord } from "../providers/json";
import { MalformedUpstreamError } from "../providers/errors";
import { credentialOfPlan } from "./credentials";
import { doorEndpoints, type DoorEndpoints } from "../routing/door-endpoints";
import { DoorSamples, outcomeOfStatus } from "../routing/door-samples";
import { credentialForJob } from "./video/job-credential";
import { fetchJson, UpstreamFailure } from "./upstream";
import { safely, writeGenerationLog } from "./log";
import type { GenerationDeps } from "./images";
import { videoAdapterFor } from "./video";
import type { VideoAdapter, VideoJob, VideoStatus } from "./video/types";
import { mintPlaybackToken } from "./video/playback-token";
import { contentSafetyHeaders, isVideoType, notAVideo, servedVideoType, videoContentOrigin } from "./video/content-safety";
import { keyStateStub } from "../durable-objects/key-state";

export const DEFAULT_VIDEO_MODEL = "sora-2";

export interface VideoBody {
  prompt: string;
  model?: string;
  seconds?: string | number;
  size?: string;
}

/** `request_logs.extra` of a video job. */
export interface VideoExtra {
  provider: string;
  upstreamId: string;
  status: VideoStatus;
  progress: number;
  error?: string;
  seconds: string;
  size: string;
  contentType: string;
  /** Where the upstream serves the finished file (fetched with the provider credential). */
  upstreamContentUrl: string;
  credentialSource: "credits" | "byok";
  providerKeyId?: string;
  /** The regional endpoint the job was created at (not the provider's default): polled and downloaded there. */
  region?: string;
  /** Set once the file is stored in the UPLOADS bucket; served from there. */
  r2Key?: string;
}

export interface VideoView {
  id: string;
  object: "video";
  model: string;
  status: VideoStatus;
  progress: number;
  created_at: number;
  seconds: string;
  size: string;
  error: { message: string } | null;
  /** Playable without headers until `content_url_expires_at` (signed token). */
  content_url: string;
  content_url_expires_at: number;
  usage?: { cost: number; cost_usd: string };
  metadata: { request_id: string; log_id: string; used_model: string; used_provider: string; organization_id: string; project_id: string };
}

type LogRow = typeof requestLogs.$inferSelect;

export function parseVideoExtra(extra: Record<string, unknown> | null): VideoExtra | null {
  if (!isRecord(extra) || typeof extra.upstreamId !== "string" || typeof extra.provider !== "string") return null;
  return extra as unknown as VideoExtra;
}

export function videoCost(mapping: ProviderMapping, size: string, seconds: string): Pico | null {
  const perSecond = mapping.pricing.per_second?.[size];
  if (perSecond === undefined) return null;
  return parseUsd(perSecond) * BigInt(Number(seconds)) + (mapping.pricing.request ? parseUsd(mapping.pricing.request) : 0n);
}

async function view(env: Env, origin: string, row: LogRow, extra: VideoExtra): Promise<VideoView> {
  const { token, expiresAt } = await mintPlaybackToken(env, row.id);
  const out: VideoView = {
    id: row.id,
    object: "video",
    model: row.usedModel ?? row.requestedModel,
    status: extra.status,
    progress: extra.progress,
    created_at: Math.floor(row.createdAt / 1000),
    seconds: extra.seconds,
    size: extra.size,
    error: extra.error ? { message: extra.error } : null,
    // On the video content origin when one is configured: never opened on the dashboard's origin.
    content_url: `${videoContentOrigin(env) ?? origin}/v1/videos/logs/${row.id}/content?token=${encodeURIComponent(token)}`,
    content_url_expires_at: Math.floor(expiresAt / 1000),
    metadata: {
      request_id: row.requestId,
      log_id: row.id,
      used_model: row.usedModel ?? row.requestedModel,
      used_provider: row.usedProvider ?? extra.provider,
      organization_id: row.organizationId,
      project_id: row.projectId,
    },
  };
  // A failed job shows its refund as cost 0.
  if (row.costPico || extra.status === "failed") out.usage = { cost: toUsdNumber(BigInt(row.costPico)), cost_usd: formatUsd(BigInt(row.costPico)) };
  return out;
}

const asFailure = (err: unknown): UpstreamFailure | null =>
  err instanceof UpstreamFailure ? err : err instanceof MalformedUpstreamError ? new UpstreamFailure(502, err.message, "upstream_error") : null;

// ---------- create ----------

export async function createVideo(input: GenerationDeps & { body: VideoBody; origin: string }): Promise<VideoView> {
  const { env, body } = input;
  const started = Date.now();
  if (typeof body.prompt !== "string" || !body.prompt.trim()) throw badRequest("'prompt' is required.", "prompt");
  const requested = body.model ?? DEFAULT_VIDEO_MODEL;
  const ref = parseModelRef(requested);
  if (ref.kind === "unknown" || ref.model.kind !== "video") throw badRequest(`The model '${requested}' is not a video generation model.`, "model", "model_not_found");
  if (isDeactivated(ref.model, started)) throw badRequest(`The model '${requested}' has been deactivated.`, "model", "model_deactivated");
  if (ref.kind === "pinned" && input.auth.key.kind === "coding-plan") {
    throw badRequest("Coding-plan keys accept only canonical model ids (no 'provider/' prefix).", "model", "provider_pinning_not_allowed");
  }
  const model = ref.model;
  const mappings = ref.kind === "pinned" ? [ref.mapping] : model.mappings;
  const candidates = mappings.flatMap((mapping) => {
    const adapter = videoAdapterFor(mapping.providerId);
    return adapter ? [{ mapping, adapter }] : [];
  });
  const first = candidates[0];
  if (!first) throw badRequest(`No provider can serve '${requested}' for video generation.`, "model", "model_not_supported");
  const { mapping, adapter } = first;
  const sizes = mapping.supportedVideoSizes ?? [];
  const size = body.size ?? (sizes.includes(adapter.defaultSize) ? adapter.defaultSize : sizes[0] ?? adapter.defaultSize);
  if (!sizes.includes(size)) throw badRequest(`Unsupported size '${size}' for ${model.id}; supported: ${sizes.join(", ")}.`, "size", "unsupported_size");
  const seconds = body.seconds === undefined ? adapter.defaultSeconds : String(body.seconds);
  if (!adapter.seconds.includes(seconds)) throw badRequest(`'seconds' must be one of ${adapter.seconds.join(", ")}.`, "seconds");
  const cost = videoCost(mapping, size, seconds);
  if (cost === null) throw badRequest(`${model.id} has no price for size '${size}'.`, "size", "unsupported_size");

  // The mapping's endpoints the key may use (IAM, residency per endpoint) with a credential, nearest
  // first for the caller (src/routing/door-endpoints.ts); the job goes to the first.
  const endpointsFor = (auth: KeyContext): DoorEndpoints =>
    doorEndpoints(env, auth, { model, mappings: [mapping], kind: "video", clientIp: input.clientIp, caller: input.callerContinent });
  const pre = endpointsFor(input.auth);
  // Admission comes before the job: a submitted job is billed upstream and cannot be recalled, so
  // it never starts as an early call (docs/admission.md). The organization's credits are asked
  // beside the key (one round trip, not two) when the cached context pays this provider with them.
  const { admission, fresh, credit } = await admitWithEarlyCall<never>(env, input.auth, {
    estimate: cost,
    creditEstimate: pre.endpoints[0]?.credential.source === "credits" ? cost : null,
    early: null,
    onCancelled: () => undefined,
    waitUntil: input.waitUntil,
  });
  const ctx = admission.context;
  renewLeasesEarly(env, ctx, input.waitUntil);
  let settled = false;
  let creditsReservationId: string | null = credit?.ok ? credit.reservationId : null;
  const settle = (total: Pico, source: "credits" | "byok") => {
    settled = true;
    input.waitUntil(
      safely("video settlement", settleRequest(env, ctx, admission.reservationId, { totalPico: total, creditsPico: source === "credits" ? total : 0n }, creditsReservationId)),
    );
  };
  const logId = newId("log");
  const checked = fresh ? endpointsFor(ctx) : pre;
  const endpoint = checked.endpoints[0];
  const region = endpoint ? endpoint.region || null : (mapping.region ?? getProvider(mapping.providerId)?.region ?? null);
  const baseLog = {
    logId,
    requestId: input.requestId,
    kind: "video" as const,
    sourceApp: input.sourceApp,
    requestedModel: requested,
    requestedProvider: ref.kind === "pinned" ? ref.providerId : null,
    usedModel: model.id,
    usedProvider: mapping.providerId,
    usedRegion: region,
    createdAt: started,
  };
  try {
    if (!endpoint && checked.denial !== null) throw permissionDenied(checked.denial);
    const cred = endpoint ? await credentialOfPlan(env, endpoint.credential, endpoint.provider) : null;
    if (!endpoint || !cred) throw badRequest(`No credentials are available for ${model.id} in this project (mode '${ctx.project.mode}').`, "model", "no_provider_available");
    if (cred.source === "credits") {
      const c = credit ?? (await admitCredits(env, ctx.organization.id, cost));
      if (!c.ok) throw c.error;
      creditsReservationId = c.reservationId;
    }
    const attempt: RoutingAttempt = { provider: mapping.providerId, model: mapping.externalId, status_code: 0, succeeded: false, credentialSource: cred.source, logId };
    if (cred.providerKeyId) attempt.providerKeyId = cred.providerKeyId;
    if (region) attempt.region = region;

    let job: VideoJob;
    // The submission in the live metrics, as the other doors' attempts (src/routing/door-samples.ts).
    const samples = new DoorSamples();
    const submitted = Date.now();
    try {
      const call = adapter.create({ prompt: body.prompt, externalModel: mapping.externalId, seconds, size }, cred);
      job = adapter.parseJob(await fetchJson(call.url, call.init));
      samples.add(endpoint, model.id, "ok", Date.now() - submitted);
    } catch (err) {
      const failure = asFailure(err);
      samples.add(endpoint, model.id, failure ? outcomeOfStatus(failure.status) : "error", null);
      samples.report(env, input.waitUntil, input.callerContinent);
      if (!failure) throw err;
      attempt.status_code = failure.status;
      attempt.error_type = failure.errorType;
      const apiError = failure.toApiError();
      settle(0n, cred.source);
      input.waitUntil(
        safely("video request log", writeGenerationLog(env, ctx, { ...baseLog, statusCode: apiError.status, errorType: apiError.type, errorMessage: apiError.message.slice(0, 500), costPico: 0n, creditsCostPico: 0n, byokCostPico: 0n, latencyMs: Date.now() - started, routing: [attempt] })),
      );
      throw apiError;
    }
    samples.report(env, input.waitUntil, input.callerContinent);
    attempt.status_code = 200;
    attempt.succeeded = true;
    attempt.latency_ms = Date.now() - started;
    const extra: VideoExtra = {
      provider: mapping.providerId,
      upstreamId: job.upstreamId,
      status: job.status,
      progress: job.progress,
      seconds,
      size,
      contentType: "video/mp4",
      upstreamContentUrl: adapter.content(job.upstreamId, cred, {}).url,
      credentialSource: cred.source,
    };
    if (cred.providerKeyId) extra.providerKeyId = cred.providerKeyId;
    if ("region" in endpoint.credential && endpoint.credential.region) extra.region = endpoint.credential.region;
    if (job.error) extra.error = job.error;
    settle(cost, cred.source);
    const log = {
      ...baseLog,
      statusCode: 200,
      costPico: cost,
      creditsCostPico: cred.source === "credits" ? cost : 0n,
      byokCostPico: cred.source === "byok" ? cost : 0n,
      latencyMs: Date.now() - started,
      routing: [attempt],
      extra: extra as unknown as Record<string, unknown>,
    };
    // Awaited: the job must be visible to GET /v1/videos/{id} as soon as the client has its id.
    await writeGenerationLog(env, ctx, log);
    const row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId)).get();
    if (!row) throw new Error("video log row missing after insert");
    return view(env, input.origin, row, extra);
  } catch (err) {
    if (!settled) {
      settle(0n, "credits");
      if (err instanceof ApiError) {
        input.waitUntil(
          safely("video request log", writeGenerationLog(env, ctx, { ...baseLog, statusCode: err.status, errorType: err.type, errorMessage: err.message, costPico: 0n, creditsCostPico: 0n, byokCostPico: 0n, latencyMs: Date.now() - started })),
        );
      }
    }
    throw err;
  }
}

// ---------- status ----------

async function loadVideoRow(env: Env, logId: string, organizationId: string | null): Promise<{ row: LogRow; extra: VideoExtra }> {
  if (!/^log_[A-Za-z0-9]{20}$/.test(logId)) throw notFound("No such video.", "video_not_found");
  const row = await getDb(env.DB)
    .select()
    .from(requestLogs)
    .where(and(eq(requestLogs.id, logId), eq(requestLogs.kind, "video")))
    .get();
  const extra = row ? parseVideoExtra(row.extra) : null;
  // Another organization's video is indistinguishable from a missing one.
  if (!row || !extra || (organizationId !== null && row.organizationId !== organizationId)) throw notFound("No such video.", "video_not_found");
  return { row, extra };
}

function adapterOf(extra: VideoExtra): VideoAdapter {
  const adapter = videoAdapterFor(extra.provider);
  if (!adapter) throw new ApiError(502, "The video's provider is no longer supported.", { type: "upstream_error", code: "provider_unavailable" });
  return adapter;
}

export const videoObjectKey = (logId: string): string => `videos/${logId}.mp4`;

/**
 * Copies a finished video into the UPLOADS bucket (providers keep results only for a while) and
 * records the object key, after which the content endpoint serves it from R2.
 */
export async function storeVideo(env: Env, row: LogRow, extra: VideoExtra): Promise<void> {
  const adapter = adapterOf(extra);
  const cred = await credentialForJob(env, row.organizationId, extra);
  const call = adapter.content(extra.upstreamId, cred, {});
  // Never follows a redirect (docs/security.md): its target never passed the SSRF guard.
  const res = await fetch(call.url, { ...call.init, redirect: "manual", signal: AbortSignal.timeout(300_000) });
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    throw new Error(`video download answered HTTP ${res.status}`);
  }
  // Only a video type is ever stored (and served): anything else from the upstream is not copied.
  const contentType = servedVideoType(res.headers.get("content-type"), extra.contentType);
  if (contentType === null) {
    await res.body.cancel();
    throw new Error("video download answered a type that is not a video; not stored");
  }
  const key = videoObjectKey(row.id);
  const length = Number(res.headers.get("content-length") ?? "NaN");
  if (Number.isSafeInteger(length) && length >= 0) {
    const fixed = new FixedLengthStream(length);
    await Promise.all([res.body.pipeTo(fixed.writable), env.UPLOADS.put(key, fixed.readable, { httpMetadata: { contentType } })]);
  } else {
    await env.UPLOADS.put(key, await res.arrayBuffer(), { httpMetadata: { contentType } });
  }
  await getDb(env.DB)
    .update(requestLogs)
    .set({ extra: { ...extra, r2Key: key, contentType } as unknown as Record<string, unknown> })
    .where(eq(requestLogs.id, row.id));
}

/**
 * Current state of a job of the caller's organization; refreshes it from the upstream until final.
 * When the job has just completed, `waitUntil` copies the file to R2 (`storeVideo`).
 */
export async function getVideo(env: Env, ctx: KeyContext, logId: string, origin: string, waitUntil?: (p: Promise<unknown>) => void): Promise<VideoView> {
  const { row, extra } = await loadVideoRow(env, logId, ctx.organization.id);
  if (extra.status === "completed" || extra.status === "failed") return view(env, origin, row, extra);
  const adapter = adapterOf(extra);
  const cred = await credentialForJob(env, row.organizationId, extra);
  let job: VideoJob;
  try {
    const call = adapter.status(extra.upstreamId, cred);
    job = adapter.parseJob(await fetchJson(call.url, call.init));
  } catch (err) {
    const failure = asFailure(err);
    if (!failure) throw err;
    throw failure.toApiError();
  }
  const next: VideoExtra = { ...extra, status: job.status, progress: job.progress };
  if (job.error) next.error = job.error;
  if (next.status === "failed") {
    const refunded = await refundFailedJob(env, row, next);
    return view(env, origin, refunded, next);
  }
  await getDb(env.DB).update(requestLogs).set({ extra: next as unknown as Record<string, unknown> }).where(eq(requestLogs.id, row.id));
  if (next.status === "completed" && waitUntil) waitUntil(safely("video copy to R2", storeVideo(env, row, next)));
  return view(env, origin, row, next);
}

/**
 * A job the provider failed after accepting it was never delivered: its charge is given back.
 * One D1 batch marks the row failed with cost 0 and credits the organization, guarded so that
 * only the first poll to see the failure refunds (`changes()` of the row update); then the key's
 * spend counters are lowered by the same amount. Returns the row as it now stands.
 */
async function refundFailedJob(env: Env, row: LogRow, next: VideoExtra): Promise<LogRow> {
  const [marked] = await env.DB.batch([
    env.DB.prepare(
      "UPDATE request_logs SET extra = ?, error_message = ?, cost_pico = 0, credits_cost_pico = 0, byok_cost_pico = 0 WHERE id = ? AND json_extract(extra, '$.status') <> 'failed'",
    ).bind(JSON.stringify(next), next.error ? `video generation failed: ${next.error}`.slice(0, 500) : "video generation failed", row.id),
    env.DB.prepare("UPDATE organizations SET credits_pico = credits_pico + CAST(? AS INTEGER) WHERE id = ? AND changes() > 0").bind(
      BigInt(row.creditsCostPico).toString(),
      row.organizationId,
    ),
  ]);
  if ((marked?.meta.changes ?? 0) > 0 && row.costPico > 0) {
    // The aggregates (and the R2 archive) learn the refund from a record of its own.
    await sendLogRow(env, { row: refundRecordJson(row), logId: `${row.id}${REFUND_SUFFIX}`, keyId: row.apiKeyId, organizationId: row.organizationId }).catch((err: unknown) =>
      console.error("video refund record not sent", err instanceof Error ? err.message : String(err)),
    );
    await keyStateStub(env, row.apiKeyId)
      .refund(BigInt(row.costPico), row.createdAt)
      .catch((err: unknown) => console.error("video refund of key spend failed", err instanceof Error ? err.message : String(err)));
  }
  return { ...row, costPico: 0, creditsCostPico: 0, byokCostPico: 0, extra: next as unknown as Record<string, unknown> };
}

// ---------- content proxy ----------

export { parseRange, type ByteRange } from "./video/range";
import { parseRange } from "./video/range";

/** Upstream headers passed on; the content type is never among them (`servedVideoType`). */
const PASS_HEADERS = ["content-length", "content-range", "accept-ranges", "etag", "last-modified"];

async function fromR2(env: Env, logId: string, key: string, contentType: string, range: string | undefined, ifRange: string | undefined): Promise<Response> {
  const head = await env.UPLOADS.head(key);
  if (!head) throw notFound("The video file is no longer available.", "video_not_found");
  // An object stored under another type (before this rule existed) is never served as such.
  const stored = head.httpMetadata?.contentType ?? contentType;
  if (!isVideoType(stored)) throw notAVideo(`'${stored.slice(0, 100)}'`);
  const headers = new Headers({ "accept-ranges": "bytes", etag: head.httpEtag, "cache-control": "private, max-age=300" });
  contentSafetyHeaders(headers, logId, servedVideoType(stored, contentType) ?? "video/mp4");
  const useRange = range !== undefined && (ifRange === undefined || ifRange === head.httpEtag || ifRange === head.uploaded.toUTCString());
  const parsed = useRange ? parseRange(range, head.size) : null;
  if (parsed === "unsatisfiable") {
    headers.set("content-range", `bytes */${head.size}`);
    return new Response(null, { status: 416, headers });
  }
  if (parsed) {
    const obj = await env.UPLOADS.get(key, { range: { offset: parsed.start, length: parsed.end - parsed.start + 1 } });
    if (!obj) throw notFound("The video file is no longer available.", "video_not_found");
    headers.set("content-range", `bytes ${parsed.start}-${parsed.end}/${head.size}`);
    headers.set("content-length", String(parsed.end - parsed.start + 1));
    return new Response(obj.body, { status: 206, headers });
  }
  const obj = await env.UPLOADS.get(key);
  if (!obj) throw notFound("The video file is no longer available.", "video_not_found");
  headers.set("content-length", String(obj.size));
  return new Response(obj.body, { status: 200, headers });
}

/**
 * Streams a video through the gateway. `organizationId` null means the caller presented a valid
 * playback token for this log id (already checked). Range and If-Range go to the origin of the
 * file (R2 or the upstream), whose 200/206/416 answer is passed through.
 */
export async function streamVideoContent(
  env: Env,
  logId: string,
  organizationId: string | null,
  headers: { range?: string | undefined; ifRange?: string | undefined },
): Promise<Response> {
  const { row, extra } = await loadVideoRow(env, logId, organizationId);
  if (extra.r2Key) return fromR2(env, row.id, extra.r2Key, extra.contentType, headers.range, headers.ifRange);
  if (extra.status === "failed") throw notFound("This video generation failed; there is no content.", "video_failed");
  const adapter = adapterOf(extra);
  const cred = await credentialForJob(env, row.organizationId, extra);
  const forward: Record<string, string> = {};
  if (headers.range) forward.range = headers.range;
  if (headers.ifRange) forward["if-range"] = headers.ifRange;
  const call = adapter.content(extra.upstreamId, cred, forward);
  let res: Response;
  try {
    // Never follows a redirect (docs/security.md): its target never passed the SSRF guard.
    res = await fetch(call.url, { ...call.init, redirect: "manual", signal: AbortSignal.timeout(60_000) });
  } catch {
    throw new ApiError(502, "Could not reach the video provider.", { type: "upstream_error", code: "upstream_error" });
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    throw new ApiError(502, `The video provider answered with a redirect (HTTP ${res.status}); redirects are not followed.`, { type: "upstream_error", code: "upstream_redirect" });
  }
  if (res.status !== 200 && res.status !== 206 && res.status !== 416) {
    await res.body?.cancel();
    if (res.status === 404) throw notFound("The video is not available (not finished yet, or expired at the provider).", "video_not_ready");
    throw new ApiError(502, `The video provider answered HTTP ${res.status}.`, { type: "upstream_error", code: "upstream_error" });
  }
  const type = servedVideoType(res.headers.get("content-type"), extra.contentType);
  if (type === null) {
    await res.body?.cancel();
    throw notAVideo(`'${(res.headers.get("content-type") ?? "").slice(0, 100)}'`);
  }
  const out = new Headers({ "cache-control": "private, max-age=300" });
  for (const h of PASS_HEADERS) {
    const v = res.headers.get(h);
    if (v) out.set(h, v);
  }
  contentSafetyHeaders(out, row.id, type);
  if (!out.has("accept-ranges")) out.set("accept-ranges", "bytes");
  return new Response(res.status === 416 ? null : res.body, { status: res.status, headers: out });
}

/**
 * Image generation (`POST /v1/images/generations`, MCP `generate-image`, `generate-nano-banana`).
 * Same gateway path as chat: one KeyState admission with an upper-bound estimate (and the
 * organization's credits for credit-paid providers, asked at the same time) while the first
 * provider's attempt already runs (an early call, src/billing/early-call.ts: nothing released
 * before admission answered, cancelled if it refuses), IAM, provider credentials by project mode,
 * failover across the model's providers on retryable upstream errors, then request log +
 * settlement with the exact catalogue price in waitUntil.
 */
import type { KeyContext } from "../context/key-context";
import type { GatewayRequest } from "../routes/middleware/gateway-request";
import { isDeactivated, parseModelRef } from "../catalog";
import type { ModelDefinition, ProviderMapping } from "../catalog/types";
import { ApiError, badRequest, permissionDenied } from "../errors/api-error";
import { renewLeasesEarly, settleRequest } from "../billing/settle";
import { admitCreditCandidates } from "../billing/credits";
import { admitWithEarlyCall, type EarlyAdmitted } from "../billing/early-call";
import { formatUsd, maxPico, toUsdNumber, type Pico } from "../billing/money";
import type { RoutingAttempt } from "../db/schema";
import { newId } from "../lib/ids";
import { toBase64 } from "../lib/crypto";
import { checkNamedUrl } from "../lib/ssrf";
import { malformed, MalformedUpstreamError } from "../providers/errors";
import { credentialOfPlan, type UpstreamCredential } from "./credentials";
import { credentialHash } from "../routing/credentials";
import { imageAdapterFor } from "./providers";
import type { GeneratedImage, ImageAdapter, ImageUpstreamResult, ImageUsage } from "./providers/types";
import { fetchJson, UpstreamFailure } from "./upstream";
import { safely, writeGenerationLog, type GenerationLog } from "./log";
import { queueBodies } from "../usage/body-batch";
import { compactBody, errorBody } from "../usage/body-shapes";
import { doorEndpoints, type DoorEndpoint } from "../routing/door-endpoints";
import { DoorSamples, outcomeOfStatus } from "../routing/door-samples";

export const DEFAULT_IMAGE_MODEL = "qwen-image-3.0";
export const MAX_IMAGES = 4;

export interface ImageGenerationBody {
  prompt: string;
  model?: string;
  size?: string;
  n?: number;
  aspect_ratio?: string;
  response_format?: "b64_json" | "url";
}

export interface GenerationDeps extends GatewayRequest {
  /** `x-no-fallback: true`: no failover to another provider. */
  noFallback?: boolean;
}

/**
 * Keeps the first generated image somewhere (nano-banana's R2 save) before the request is logged,
 * so the log row carries its storage cost (`data_storage_cost`, apart from the inference cost).
 */
export type PersistImage = (image: { b64: string; mimeType: string }) => Promise<{ storagePico: Pico }>;

export interface ImageMetadata {
  request_id: string;
  requested_model: string;
  /** "" when no provider was requested (as chat's metadata). */
  requested_provider: string;
  used_model: string;
  used_provider: string;
  /** "" when the provider has no fixed region. */
  used_region: string;
  log_id: string;
  organization_id: string;
  project_id: string;
  routing: RoutingAttempt[];
}

export interface ImageData {
  b64_json?: string;
  url?: string;
  revised_prompt?: string;
}

export interface ImageGenerationResult {
  created: number;
  data: ImageData[];
  model: string;
  usage?: {
    input_tokens: number;
    /** As the OpenAI Images API: generation prompts are text, so all input is text unless the upstream splits it. */
    input_tokens_details: { text_tokens: number; image_tokens: number };
    output_tokens: number;
    total_tokens: number;
    images: number;
    cost: number;
    cost_usd: string;
  };
  metadata: ImageMetadata;
  /** MIME type of each image in `data` (not part of the OpenAI body; MCP uses it). */
  mimeTypes: string[];
  /** Text the model returned with the image (Gemini), if any. */
  text?: string;
}

interface Candidate {
  mapping: ProviderMapping;
  adapter: ImageAdapter;
}

// ---------- validation and pricing (pure) ----------

export { DEFAULT_IMAGE_SIZE, estimateImageCost, imageCost, imageSizeSchema, sizesFor, upstreamSize } from "./image-pricing";
import { DEFAULT_IMAGE_SIZE, estimateImageCost, imageCost, sizesFor, upstreamSize } from "./image-pricing";

interface ResolvedRequest {
  model: ModelDefinition;
  requestedProvider: string | null;
  candidates: Candidate[];
  size: string;
  n: number;
}

/** Model, provider candidates, size and n of a request; throws the 400s. */
export function resolveImageRequest(body: ImageGenerationBody, now = Date.now()): ResolvedRequest {
  const requested = body.model ?? DEFAULT_IMAGE_MODEL;
  const ref = parseModelRef(requested);
  if (ref.kind === "unknown" || ref.model.kind !== "image") {
    throw badRequest(`The model '${requested}' is not an image generation model.`, "model", "model_not_found");
  }
  if (isDeactivated(ref.model, now)) throw badRequest(`The model '${requested}' has been deactivated.`, "model", "model_deactivated");
  const mappings = ref.kind === "pinned" ? [ref.mapping] : ref.model.mappings.filter((m) => !m.deactivatedAt || Date.parse(m.deactivatedAt) > now);
  const all: Candidate[] = [];
  for (const mapping of mappings) {
    const adapter = imageAdapterFor(mapping.providerId);
    if (adapter) all.push({ mapping, adapter });
  }
  if (!all.length) throw badRequest(`No provider can serve '${requested}' for image generation.`, "model", "model_not_supported");
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > MAX_IMAGES) throw badRequest(`'n' must be an integer from 1 to ${MAX_IMAGES}.`, "n");
  const size = body.size ?? DEFAULT_IMAGE_SIZE;
  const candidates = size === "auto" ? all : all.filter((c) => sizesFor(c.mapping, c.adapter).includes(size));
  if (!candidates.length) {
    const first = all[0]!;
    throw badRequest(`Unsupported size '${size}' for ${ref.model.id}; supported: ${sizesFor(first.mapping, first.adapter).join(", ")}.`, "size", "unsupported_size");
  }
  return { model: ref.model, requestedProvider: ref.kind === "pinned" ? ref.providerId : null, candidates, size, n };
}

// ---------- upstream ----------

async function runUpstream(c: Candidate, cred: UpstreamCredential, prompt: string, requestedSize: string, n: number, aspectRatio: string | undefined, cancel?: AbortSignal): Promise<ImageUpstreamResult> {
  const size = upstreamSize(c.adapter, requestedSize);
  const calls = c.adapter.supportsN ? 1 : n;
  const perCall = c.adapter.supportsN ? n : 1;
  const results = await Promise.all(
    Array.from({ length: calls }, async () => {
      const req = c.adapter.request({ prompt, externalModel: c.mapping.externalId, size, n: perCall, ...(aspectRatio ? { aspectRatio } : {}) }, cred);
      return c.adapter.parse(await fetchJson(req.url, req.init, undefined, cancel));
    }),
  );
  const images = results.flatMap((r) => r.images).slice(0, n);
  const usages = results.map((r) => r.usage).filter((u): u is ImageUsage => u !== null);
  const usage = usages.length
    ? usages.reduce((a, b) => ({
        inputTokens: a.inputTokens + b.inputTokens,
        outputTokens: a.outputTokens + b.outputTokens,
        inputTextTokens: (a.inputTextTokens ?? a.inputTokens) + (b.inputTextTokens ?? b.inputTokens),
        inputImageTokens: (a.inputImageTokens ?? 0) + (b.inputImageTokens ?? 0),
      }))
    : null;
  const text = results.map((r) => r.text ?? "").join("");
  return text ? { images, usage, text } : { images, usage };
}

/**
 * Fetches an upstream image URL (for `b64_json`); the URL is the provider's signed result link,
 * named by the upstream (an organization's own server with BYOK): it passes the SSRF guard for
 * named URLs (`checkNamedUrl`: public https, or the origin of `baseUrl` the request went to) and
 * redirects are never followed (docs/security.md).
 */
async function download(url: string, baseUrl: string, cancel?: AbortSignal): Promise<{ b64: string; mimeType: string }> {
  const check = checkNamedUrl(url, baseUrl);
  if (!check.ok) throw new UpstreamFailure(502, `the provider named an image URL that is not fetched (${check.reason})`, "upstream_error");
  let res: Response;
  try {
    const timeout = AbortSignal.timeout(60_000);
    res = await fetch(check.url, { redirect: "manual", signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout });
  } catch {
    throw new UpstreamFailure(0, "could not download the generated image", "network_error");
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    throw new UpstreamFailure(502, `the image download answered with a redirect (HTTP ${res.status}); redirects are not followed`, "upstream_error");
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UpstreamFailure(502, `image download failed with HTTP ${res.status}`, "upstream_error");
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = res.headers.get("content-type")?.split(";")[0]?.trim();
  return { b64: toBase64(bytes), mimeType: type && type.startsWith("image/") ? type : "image/png" };
}

async function shape(img: GeneratedImage, format: "b64_json" | "url" | undefined, baseUrl: string, cancel?: AbortSignal): Promise<{ data: ImageData; mimeType: string }> {
  const data: ImageData = {};
  let mimeType = img.mimeType;
  if (format === "b64_json" && !img.b64 && img.url) {
    const d = await download(img.url, baseUrl, cancel);
    data.b64_json = d.b64;
    mimeType = d.mimeType;
  } else if (format === "url" && !img.url && img.b64) {
    data.url = `data:${img.mimeType};base64,${img.b64}`;
  } else if (format === "url") {
    data.url = img.url!;
  } else if (format === "b64_json") {
    data.b64_json = img.b64!;
  } else {
    if (img.b64) data.b64_json = img.b64;
    else if (img.url) data.url = img.url;
  }
  if (img.revisedPrompt) data.revised_prompt = img.revisedPrompt;
  return { data, mimeType };
}

type Usable = Candidate & { cred: UpstreamCredential; region: string; endpoint: DoorEndpoint };
type Shaped = Awaited<ReturnType<typeof shape>>;
/** One provider's attempt: the images generated and shaped for the answer, or what went wrong. */
type ImageAttempt = { ok: true; result: ImageUpstreamResult; shaped: Shaped[] } | { ok: false; error: unknown };

async function attemptImages(c: Usable, prompt: string, size: string, n: number, body: ImageGenerationBody, cancel?: AbortSignal): Promise<ImageAttempt> {
  try {
    const result = await runUpstream(c, c.cred, prompt, size, n, body.aspect_ratio, cancel);
    if (!result.images.length) throw malformed("no images");
    const shaped = await Promise.all(result.images.map((img) => shape(img, body.response_format, c.cred.baseUrl, cancel)));
    return { ok: true, result, shaped };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * The endpoints a key may use (IAM, residency) and has credentials for, nearest first for its
 * caller (src/routing/door-endpoints.ts); the first IAM denial.
 */
async function usableCandidates(input: GenerationDeps, ctx: KeyContext, resolved: ResolvedRequest): Promise<{ allowed: boolean; denial: string | null; usable: Usable[] }> {
  const byMapping = new Map(resolved.candidates.map((c) => [c.mapping, c]));
  const mappings = resolved.candidates.map((c) => c.mapping);
  const { endpoints, denial } = doorEndpoints(input.env, ctx, { model: resolved.model, mappings, kind: "image", clientIp: input.clientIp, caller: input.callerContinent });
  const usable: Usable[] = [];
  for (const e of endpoints) usable.push({ ...byMapping.get(e.mapping)!, region: e.region, endpoint: e, cred: await credentialOfPlan(input.env, e.credential, e.provider) });
  return { allowed: usable.length > 0 || denial === null, denial, usable };
}

const regionOf = (c: Usable): string | null => c.region || null;

/** The routing record of an early call that admission did not let through (logged, not billed). */
function cancelledAttempt(c: Usable, logId: string, ms: number): RoutingAttempt {
  const rec: RoutingAttempt = { provider: c.mapping.providerId, model: c.mapping.externalId, status_code: 499, succeeded: false, credentialSource: c.cred.source, logId, latency_ms: ms, error_type: "early_cancelled" };
  if (c.cred.providerKeyId) rec.providerKeyId = c.cred.providerKeyId;
  const region = regionOf(c);
  if (region) rec.region = region;
  return rec;
}

// ---------- the request ----------

export async function generateImages(input: GenerationDeps & { body: ImageGenerationBody; persist?: PersistImage }): Promise<ImageGenerationResult> {
  const { env, body } = input;
  const started = Date.now();
  const resolved = resolveImageRequest(body, started);
  const { model, size, n } = resolved;
  const prompt = body.prompt;
  if (typeof prompt !== "string" || !prompt.trim()) throw badRequest("'prompt' is required.", "prompt");
  if (resolved.requestedProvider && input.auth.key.kind === "coding-plan") {
    throw badRequest("Coding-plan keys accept only canonical model ids (no 'provider/' prefix).", "model", "provider_pinning_not_allowed");
  }

  const estimate = resolved.candidates.map((c) => estimateImageCost(c.mapping, upstreamSize(c.adapter, size), n, prompt.length)).reduce(maxPico, 0n);
  const logId = newId("log");
  const baseLog = {
    logId,
    requestId: input.requestId,
    kind: "image" as const,
    sourceApp: input.sourceApp,
    requestedModel: body.model ?? DEFAULT_IMAGE_MODEL,
    requestedProvider: resolved.requestedProvider,
  };
  // Under the cached context: the providers the key may use, so the first one can start while
  // admission is asked (the errors are thrown after admission, as before: a dead key is a 401 first).
  // A credential that cannot be read is answered after admission, as before (no early call then).
  const pre = await usableCandidates(input, input.auth, resolved).catch(() => null);
  const creditPaid = (c: Usable) => c.cred.source === "credits";
  const creditBound = (c: Usable) => estimateImageCost(c.mapping, upstreamSize(c.adapter, size), n, prompt.length);
  const routing: RoutingAttempt[] = [];
  const earlyCand = pre?.usable[0] ?? null;
  const earlyStarted = Date.now();
  let early: EarlyAdmitted<ImageAttempt>;
  try {
    early = await admitWithEarlyCall<ImageAttempt>(env, input.auth, {
      estimate,
      creditEstimate: pre?.usable.some(creditPaid) ? pre.usable.filter(creditPaid).map(creditBound).reduce(maxPico, 0n) : null,
      early: earlyCand ? { creditPaid: creditPaid(earlyCand), run: (signal) => attemptImages(earlyCand, prompt, size, n, body, signal) } : null,
      onCancelled: (ms) => {
        if (earlyCand) routing.push(cancelledAttempt(earlyCand, logId, ms));
      },
      waitUntil: input.waitUntil,
    });
  } catch (err) {
    // Refused at admission (spend limit, dead key): logged like chat's refusals, nothing reserved.
    if (err instanceof ApiError) {
      const refusal = { ...baseLog, usedModel: model.id, statusCode: err.status, errorType: err.type, errorMessage: err.message, latencyMs: Date.now() - started, createdAt: started, ...(routing.length ? { routing } : {}) };
      input.waitUntil(safely("image request log", writeGenerationLog(env, input.auth, refusal)));
    }
    throw err;
  }
  const admission = early.admission;
  const ctx = admission.context;
  renewLeasesEarly(env, ctx, input.waitUntil);
  const samples = new DoorSamples();
  let settled = false;
  let creditsReservationId: string | null = early.credit?.ok ? early.credit.reservationId : null;
  /** The settlement and the record are durable (key spend, D1 debit, LOGS queue): the answer is returned after them. */
  let recorded: Promise<unknown> = Promise.resolve();
  const finish = (cost: Pico, source: "credits" | "byok", entry: GenerationLog | null, answer?: unknown) => {
    settled = true;
    const bodyBatch = entry ? queueBodies(env, input.waitUntil, { auth: ctx, logId: entry.logId, requestId: entry.requestId, createdAt: entry.createdAt, request: compactBody(input.body), response: answer === undefined ? errorBody(entry) : compactBody(answer) }) : null;
    const log: GenerationLog | null = entry && bodyBatch ? { ...entry, bodyBatch } : entry;
    const creditsPico = source === "credits" ? cost : 0n;
    const settlement = safely("image settlement", settleRequest(env, ctx, admission.reservationId, { totalPico: cost, creditsPico }, creditsReservationId));
    const record = log ? safely("image request log", writeGenerationLog(env, ctx, log)) : null;
    recorded = Promise.all([settlement, record]);
    input.waitUntil(recorded);
  };

  try {
    // IAM (after admission so that a dead key is a 401 before any 403).
    const checked = early.fresh || !pre ? await usableCandidates(input, ctx, resolved) : pre;
    if (!checked.allowed) throw permissionDenied(checked.denial ?? `Access to ${model.id} is denied.`);
    let usable = checked.usable;
    if (!usable.length) {
      throw badRequest(
        `No credentials are available for ${model.id} in this project (mode '${ctx.project.mode}'); add a provider key or use credits.`,
        "model",
        "no_provider_available",
      );
    }

    // Credit-paid candidates reserve their bound in the organization's credits object (asked
    // beside the key, unless a newer context brought them).
    if (early.credit && !early.credit.ok) {
      usable = usable.filter((c) => !creditPaid(c));
      if (!usable.length) throw early.credit.error;
    } else if (!early.credit) {
      const credit = await admitCreditCandidates(env, ctx.organization.id, usable, creditPaid, creditBound);
      usable = credit.candidates;
      creditsReservationId = credit.reservationId;
    }

    let lastFailure: UpstreamFailure | null = null;
    for (const [i, c] of usable.entries()) {
      const earlyResult = c === earlyCand ? early.take() : null;
      const attemptStart = earlyResult ? earlyStarted : Date.now();
      const attempt: RoutingAttempt = {
        provider: c.mapping.providerId,
        model: c.mapping.externalId,
        status_code: 0,
        succeeded: false,
        credentialSource: c.cred.source,
        logId,
        apiKeyHash: await credentialHash(env, c.cred.apiKey),
        ...(c.cred.providerKeyId ? { providerKeyId: c.cred.providerKeyId } : {}),
        ...(c.cred.providerKeyLabel ? { providerKeyLabel: c.cred.providerKeyLabel } : {}),
      };
      const region = regionOf(c);
      if (region) attempt.region = region;
      try {
        const tried = await (earlyResult ?? attemptImages(c, prompt, size, n, body));
        if (!tried.ok) throw tried.error;
        const { result, shaped } = tried;
        attempt.status_code = 200;
        attempt.succeeded = true;
        attempt.latency_ms = Date.now() - attemptStart;
        routing.push(attempt);
        samples.add(c.endpoint, model.id, "ok", attempt.latency_ms);
        const cost = imageCost(c.mapping, upstreamSize(c.adapter, size), shaped.length, result.usage);
        const inputTokens = result.usage?.inputTokens ?? 0;
        const outputTokens = result.usage?.outputTokens ?? 0;
        let storagePico: Pico = 0n;
        let persistError: unknown = null;
        const first = shaped[0]!;
        if (input.persist && first.data.b64_json) {
          try {
            storagePico = (await input.persist({ b64: first.data.b64_json, mimeType: first.mimeType })).storagePico;
          } catch (e) {
            persistError = e; // the image was generated (and is billed); the save failure is the answer
          }
        }
        finish(cost, c.cred.source, {
          ...baseLog,
          usedModel: model.id,
          usedProvider: c.mapping.providerId,
          usedRegion: region,
          statusCode: 200,
          promptTokens: inputTokens,
          completionTokens: outputTokens,
          costPico: cost,
          creditsCostPico: c.cred.source === "credits" ? cost : 0n,
          byokCostPico: c.cred.source === "byok" ? cost : 0n,
          dataStorageCostPico: storagePico,
          latencyMs: Date.now() - started,
          routing,
          extra: { size, n: shaped.length },
          createdAt: started,
        }, { data: shaped.map((s) => s.data), ...(result.text ? { text: result.text } : {}) });
        if (persistError) throw persistError;
        const out: ImageGenerationResult = {
          created: Math.floor(Date.now() / 1000),
          data: shaped.map((s) => s.data),
          model: model.id,
          usage: {
            input_tokens: inputTokens,
            input_tokens_details: {
              text_tokens: result.usage?.inputTextTokens ?? inputTokens,
              image_tokens: result.usage?.inputImageTokens ?? 0,
            },
            output_tokens: outputTokens,
            total_tokens: inputTokens + outputTokens,
            images: shaped.length,
            cost: toUsdNumber(cost),
            cost_usd: formatUsd(cost),
          },
          metadata: {
            request_id: input.requestId,
            requested_model: baseLog.requestedModel,
            requested_provider: resolved.requestedProvider ?? "",
            used_model: model.id,
            used_provider: c.mapping.providerId,
            used_region: region ?? "",
            log_id: logId,
            organization_id: ctx.organization.id,
            project_id: ctx.project.id,
            routing,
          },
          mimeTypes: shaped.map((s) => s.mimeType),
        };
        if (result.text) out.text = result.text;
        await recorded;
        return out;
      } catch (err) {
        const failure =
          err instanceof UpstreamFailure
            ? err
            : err instanceof MalformedUpstreamError
              ? new UpstreamFailure(502, err.message, "upstream_error")
              : null;
        if (!failure) throw err;
        attempt.status_code = failure.status;
        attempt.error_type = failure.errorType;
        attempt.latency_ms = Date.now() - attemptStart;
        routing.push(attempt);
        samples.add(c.endpoint, model.id, outcomeOfStatus(failure.status), null);
        lastFailure = failure;
        const more = i < usable.length - 1;
        if (!failure.retryable || input.noFallback || !more) break;
      }
    }
    const apiError = (lastFailure ?? new UpstreamFailure(502, "no provider succeeded", "upstream_error")).toApiError();
    const last = routing[routing.length - 1];
    finish(0n, "credits", {
      ...baseLog,
      usedModel: model.id,
      usedProvider: last?.provider ?? null,
      usedRegion: last?.region ?? null,
      statusCode: apiError.status,
      errorType: apiError.type,
      errorMessage: apiError.message.slice(0, 500),
      costPico: 0n,
      creditsCostPico: 0n,
      byokCostPico: 0n,
      latencyMs: Date.now() - started,
      routing,
      createdAt: started,
    });
    throw apiError;
  } catch (err) {
    early.drop();
    // Anything that ended the request before settling releases the reservation; requests refused
    // after authentication (IAM, credentials) are logged like chat's.
    if (!settled) {
      const refused = err instanceof ApiError ? err : null;
      finish(
        0n,
        "credits",
        refused
          ? { ...baseLog, usedModel: model.id, statusCode: refused.status, errorType: refused.type, errorMessage: refused.message, costPico: 0n, creditsCostPico: 0n, byokCostPico: 0n, latencyMs: Date.now() - started, routing, createdAt: started }
          : null,
      );
    }
    throw err;
  } finally {
    samples.report(env, input.waitUntil, input.callerContinent);
  }
}

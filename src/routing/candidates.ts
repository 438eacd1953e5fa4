/**
 * The provider mappings that may serve a request, in catalogue order (ranking is score.ts).
 * A mapping is eligible when, in this order:
 *  1. neither the model nor the mapping is deactivated;
 *  2. it has every capability the request needs (tools, vision, audio/file input, audio output,
 *     JSON or structured output, multiple choices, streaming, context window, output cap);
 *  3. the organization's compliance policy allows the provider (noTraining, deniedProviders);
 *  4. a credential exists for the project's mode (credentials.ts);
 *  5. the caller's `provider` preferences keep it (preferences.ts: they only narrow);
 *  6. IAM allows it (evaluateAccess, per mapping and endpoint region).
 * A mapping is a candidate once per endpoint (src/routing/endpoints.ts): each (provider, region)
 * is checked, ranked and failed over on its own, and residency (compliance `regions`,
 * `allow_regions` / `deny_regions`) is decided per endpoint.
 * When nothing is left the error is the one of the furthest stage any mapping reached, so an IAM
 * denial is a 403 with the rule's message, a missing capability a 400 saying which, and
 * preferences that leave nothing a 400 `no_provider_available` saying why.
 * A pinned id (`provider/model`) is checked alone: its failure is the answer, it is not silently
 * replaced by another provider (alternatives are only used when the pinned one is unhealthy).
 */
import type { Env } from "../env";
import type { KeyContext, CustomModelRecord, CustomProviderRecord } from "../context/key-context";
import { ApiError, badRequest, permissionDenied } from "../errors/api-error";
import { canChat, getProvider, isDeactivated, isFreeMapping } from "../catalog";
import type { ModelDefinition, ModelKind, ProviderId, ProviderInfo, ProviderMapping, WireFormat } from "../catalog/types";
import type { ChatRequest } from "../providers/types";
import { adapterFor } from "../providers/registry";
import { evaluateAccess } from "../iam/evaluate";
import { estimatePromptTokens, requestedMaxTokens } from "../billing/estimate";
import { planCredential, type CredentialPlan } from "./credentials";
import type { ResolvedModel } from "./parse-model-id";
import { endpointsOf, type Endpoint } from "./endpoints";
import { regionMatches, type Continent } from "./regions";
import { preferenceGap, sentParameters, type ProviderPreferences } from "./preferences";

export interface Candidate {
  /** `openai`, ... or `custom:<name>`. */
  providerId: string;
  /** Canonical model id, or `<name>/<model>` for custom models. */
  modelId: string;
  provider: ProviderInfo;
  mapping: ProviderMapping;
  model: ModelDefinition | null;
  credential: CredentialPlan;
  free: boolean;
  /** This is the mapping the caller pinned with `provider/model`. */
  pinned: boolean;
  /** Region of the endpoint (`""` for a global one; `metadata.used_region`). */
  region: string;
  /** 0: the request's `model`; i > 0: its fallback `models[i - 1]`. */
  modelRank: number;
}

export interface RequestNeeds {
  stream: boolean;
  tools: boolean;
  /** Tools of type `custom` (served only where the provider has `quirks.customTools`). */
  customTools?: boolean;
  vision: boolean;
  audio: boolean;
  /** `modalities` with "audio", or `audio` (voice and format). */
  audioOutput: boolean;
  files: boolean;
  json: "none" | "json_object" | "json_schema";
  n: number;
  promptTokens: number;
  maxTokens: number | undefined;
  /** The request's `provider` preferences, else the project's default; null: none. */
  preferences?: ProviderPreferences | null;
  /** Parameters the request sent that a provider could drop (`require_parameters`). */
  params?: string[];
  /** The caller's continent (ranking's distance prior, candidate-stats.ts); null or absent: unknown. */
  callerContinent?: Continent | null;
}

/** Wire formats that can return several choices (`n > 1`). */
const MULTI_CHOICE_FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(["openai", "azure"]);
/** Wire formats whose adapters forward `audio`/`modalities` and return audio output. */
const AUDIO_OUTPUT_FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(["openai", "azure"]);

/**
 * Audio output is served only where it is both produced and billed right: a catalogue model that
 * answers in audio, on a wire format that carries it, with an `output_audio` price (otherwise
 * audio tokens would be billed at the text completion price). No catalogue mapping qualifies today.
 */
const canAnswerInAudio = (provider: ProviderInfo, m: ProviderMapping, model: ModelDefinition | null): boolean =>
  AUDIO_OUTPUT_FORMATS.has(provider.wireFormat) && model !== null && model.outputModalities.includes("audio") && m.pricing.output_audio !== undefined;

export function requestNeeds(req: ChatRequest): RequestNeeds {
  let vision = false;
  let audio = false;
  let files = false;
  for (const m of req.messages) {
    if (m.role !== "user" || typeof m.content === "string") continue;
    for (const p of m.content) {
      if (p.type === "image_url") vision = true;
      else if (p.type === "input_audio") audio = true;
      else if (p.type === "file") files = true;
    }
  }
  const rf = req.response_format?.type;
  return {
    stream: req.stream === true,
    tools: (req.tools?.length ?? 0) + (req.custom_tools?.length ?? 0) > 0,
    // An earlier call of a custom tool in the conversation needs the format too: no other provider
    // could replay it (its input is free-form text, not a function's JSON arguments).
    customTools: (req.custom_tools?.length ?? 0) > 0 || req.messages.some((m) => m.role === "assistant" && m.tool_calls?.some((tc) => tc.type === "custom")),
    vision,
    audio,
    audioOutput: req.modalities?.includes("audio") === true || req.audio !== undefined,
    files,
    json: rf === "json_object" || rf === "json_schema" ? rf : "none",
    n: req.n ?? 1,
    promptTokens: estimatePromptTokens(req),
    maxTokens: requestedMaxTokens(req),
    preferences: req.provider ?? null,
    params: req.provider?.require_parameters ? sentParameters(req) : [],
  };
}

/** Why a mapping cannot serve the request, or null when it can. Exported for tests. */
export function capabilityGap(needs: RequestNeeds, provider: ProviderInfo, m: ProviderMapping, model: ModelDefinition | null): string | null {
  // A short list, searched in place: a set built per candidate and request costs more than it saves.
  const unsupported = provider.quirks?.unsupportedParams ?? [];
  if (needs.stream && !m.streaming) return "streaming";
  if (needs.tools && (!m.tools || unsupported.includes("tools"))) return "tool calling";
  if (needs.customTools && !provider.quirks?.customTools) return "custom tools (tools of type custom)";
  if (needs.vision && !m.vision) return "image input";
  if (needs.audio && model && !model.inputModalities.includes("audio")) return "audio input";
  if (needs.files && model && !model.inputModalities.includes("file")) return "file input";
  if (needs.audioOutput && !canAnswerInAudio(provider, m, model)) return "audio output (modalities \"audio\")";
  // An adapter may serve JSON output where the catalogue does not flag it (Claude: a forced tool call).
  const adapterJson = needs.json !== "none" && adapterFor(provider.wireFormat).servesJsonOutput?.(m) === true;
  if (needs.json === "json_schema" && !m.structuredOutputs && !adapterJson) return "structured outputs (response_format json_schema)";
  if (needs.json === "json_object" && !m.jsonOutput && !m.structuredOutputs && !adapterJson) return "JSON mode (response_format json_object)";
  if (needs.n > 1 && (!MULTI_CHOICE_FORMATS.has(provider.wireFormat) || unsupported.includes("n"))) return "multiple choices (n > 1)";
  if (needs.promptTokens > m.contextLength) return `a context of ~${needs.promptTokens} prompt tokens (window: ${m.contextLength})`;
  if (needs.maxTokens !== undefined && needs.maxTokens > m.maxOutput) return `max_tokens ${needs.maxTokens} (maximum output: ${m.maxOutput})`;
  return null;
}

/** Why the organization's compliance policy refuses an endpoint, or null. */
function complianceGap(auth: KeyContext, providerId: string, provider: ProviderInfo, custom: boolean, region: string): string | null {
  const policy = auth.organization.compliance;
  if (policy.noTraining && provider.trainsOnApiData) return "compliance";
  const denied = policy.deniedProviders ?? [];
  if (denied.includes(providerId) || (custom && denied.includes("custom"))) return "compliance";
  if (policy.regions?.length && !policy.regions.some((e) => regionMatches(e, region))) return "regions";
  return null;
}

/** A custom provider as catalogue-shaped data (OpenAI-compatible wire format). */
export function customTarget(cp: CustomProviderRecord, cm: CustomModelRecord): { provider: ProviderInfo; mapping: ProviderMapping } {
  // ProviderId is the catalogue's closed set; custom providers live outside it by design.
  const id = `custom:${cp.name}` as ProviderId;
  const caps = cm.capabilities;
  const provider: ProviderInfo = { id, name: cp.name, wireFormat: "openai", baseUrl: cp.baseUrl, trainsOnApiData: false };
  const mapping: ProviderMapping = {
    providerId: id,
    externalId: cm.modelId,
    pricing: {
      prompt: cm.pricing.prompt ?? "0",
      completion: cm.pricing.completion ?? "0",
      ...(cm.pricing.request ? { request: cm.pricing.request } : {}),
      ...(cm.pricing.input_cache_read ? { input_cache_read: cm.pricing.input_cache_read } : {}),
    },
    contextLength: cm.contextLength ?? 1_000_000,
    maxOutput: cm.contextLength ?? 131_072,
    streaming: caps.streaming ?? true,
    vision: caps.vision ?? false,
    tools: caps.tools ?? false,
    parallelToolCalls: caps.tools ?? false,
    reasoning: caps.reasoning ?? false,
    jsonOutput: caps.json_output ?? false,
    structuredOutputs: false,
  };
  return { provider, mapping };
}

/** Where each kind of non-chat model is served instead (chat refuses them rather than forwarding them). */
const NON_CHAT: Readonly<Record<Exclude<ModelKind, "chat">, string>> = {
  embedding: "an embedding model (use POST /v1/embeddings)",
  moderation: "a moderation model (use POST /v1/moderations)",
  image: "an image generation model (use POST /v1/images/generations)",
  video: "a video generation model (use POST /v1/videos)",
};

export type Selection = { ok: true; candidates: Candidate[]; needs: RequestNeeds } | { ok: false; error: ApiError; needs: RequestNeeds };

type Stage = 0 | 1 | 2 | 3 | 4 | 5;
interface Rejection { stage: Stage; providerId: string; detail: string }

export function selectCandidates(env: Env, auth: KeyContext, resolved: ResolvedModel, req: ChatRequest, clientIp: string | null, now = Date.now(), modelRank = 0): Selection {
  const needs = requestNeeds(req);
  if (!needs.preferences && auth.project.providerPreferences) {
    needs.preferences = auth.project.providerPreferences;
    if (needs.preferences.require_parameters) needs.params = sentParameters(req);
  }
  const prefs = needs.preferences;
  const raw: Array<Omit<Candidate, "credential"> & { endpoint: Endpoint }> = [];
  const byok = auth.project.mode !== "credits" ? auth.providerKeys : [];
  let modelName: string;
  if (resolved.kind === "custom") {
    const t = customTarget(resolved.provider, resolved.model);
    modelName = `${resolved.provider.name}/${resolved.model.modelId}`;
    const endpoint: Endpoint = { region: "", isDefault: true };
    raw.push({ providerId: t.provider.id, modelId: modelName, provider: t.provider, mapping: t.mapping, model: null, free: isZeroPricing(t.mapping), pinned: true, region: "", modelRank, endpoint });
  } else {
    const model = resolved.model;
    modelName = model.id;
    if (isDeactivated(model, now)) {
      return { ok: false, needs, error: badRequest(`The model '${model.id}' was deactivated on ${model.deactivatedAt}.`, "model", "model_deactivated") };
    }
    if (!canChat(model) && model.kind !== "chat") {
      return { ok: false, needs, error: badRequest(`The model '${model.id}' is ${NON_CHAT[model.kind]} and cannot chat.`, "model", "model_not_chat") };
    }
    const mappings = resolved.pinned ? [resolved.pinned.mapping, ...model.mappings.filter((m) => m !== resolved.pinned!.mapping)] : model.mappings;
    for (const m of mappings) {
      const provider = getProvider(m.providerId);
      if (!provider) continue;
      const base = { providerId: m.providerId, modelId: model.id, provider, mapping: m, model, free: isFreeMapping(model, m), pinned: resolved.pinned?.mapping === m, modelRank };
      for (const endpoint of endpointsOf(env, m.providerId, m.region ?? provider.region, byok)) raw.push({ ...base, region: endpoint.region, endpoint });
    }
  }

  const eligible: Candidate[] = [];
  const rejections: Rejection[] = [];
  const anyPinned = raw.some((c) => c.pinned);
  for (const { endpoint, ...c } of raw) {
    // A pinned mapping (all its endpoints come first) is decisive: if none can serve, alternatives are not considered.
    if (anyPinned && !c.pinned && resolved.kind !== "custom" && eligible.length === 0) break;
    const custom = resolved.kind === "custom";
    if (c.mapping.deactivatedAt && Date.parse(c.mapping.deactivatedAt) <= now) {
      rejections.push({ stage: 0, providerId: c.providerId, detail: "deactivated" });
    } else {
      const gap = capabilityGap(needs, c.provider, c.mapping, c.model);
      const complianceDetail = gap ? null : complianceGap(auth, c.providerId, c.provider, custom, c.region);
      if (gap) rejections.push({ stage: 1, providerId: c.providerId, detail: gap });
      else if (complianceDetail) rejections.push({ stage: 2, providerId: c.providerId, detail: complianceDetail });
      else {
        const credential: CredentialPlan | null =
          resolved.kind === "custom"
            ? { source: "byok", providerId: c.providerId, customProvider: resolved.provider }
            : planCredential(env, auth.project.mode, c.providerId, auth.providerKeys, endpoint);
        if (!credential) rejections.push({ stage: 3, providerId: c.providerId, detail: auth.project.mode });
        else {
          // Preferences before IAM: a provider the caller did not want is no IAM denial of theirs,
          // while one they asked for that IAM denies answers with the rule's 403.
          const dropped = prefs ? preferenceGap(prefs, c.providerId, c.provider, c.mapping, needs.params ?? []) : null;
          const decision = dropped ? null : evaluateAccess(auth, { model: c.modelId, provider: c.providerId, free: c.free, clientIp, kind: "chat", region: c.region });
          if (dropped) rejections.push({ stage: 4, providerId: c.providerId, detail: dropped });
          else if (decision && !decision.allowed) rejections.push({ stage: 5, providerId: c.providerId, detail: decision.message });
          else eligible.push({ ...c, credential });
        }
      }
    }
  }

  if (eligible.length > 0) {
    const pinnedOk = !raw.some((c) => c.pinned) || eligible.some((c) => c.pinned) || resolved.kind === "custom";
    if (pinnedOk) return { ok: true, candidates: eligible, needs };
  }
  return { ok: false, needs, error: selectionError(modelName, rejections, auth) };
}

function isZeroPricing(m: ProviderMapping): boolean {
  const zero = (v: string | undefined) => v === undefined || /^0*(\.0*)?$/.test(v);
  return zero(m.pricing.prompt) && zero(m.pricing.completion) && zero(m.pricing.request);
}

function selectionError(model: string, rejections: Rejection[], auth: KeyContext): ApiError {
  const furthest = rejections.reduce<Stage>((s, r) => (r.stage > s ? r.stage : s), 0);
  const at = rejections.filter((r) => r.stage === furthest);
  const providers = [...new Set(at.map((r) => r.providerId))].join(", ");
  switch (furthest) {
    case 5:
      return permissionDenied(at[0]?.detail ?? `Access to '${model}' is denied by an IAM rule.`);
    case 4: {
      const why = [...new Set(at.map((r) => `${r.providerId}: ${r.detail}`))].join("; ");
      return badRequest(`No provider of '${model}' is left under the request's provider preferences (${why}).`, "provider", "no_provider_available");
    }
    case 3:
      return auth.project.mode === "api-keys"
        ? badRequest(`No provider key is configured for ${providers} (model '${model}'); this project uses its own provider keys. Add one with POST /v1/master/provider-keys.`, "model", "no_provider_key")
        : new ApiError(503, `No provider for '${model}' is available right now (${providers} not configured on this gateway).`, { type: "api_error", code: "provider_unavailable" });
    case 2: {
      const regions = auth.organization.compliance.regions ?? [];
      if (at.every((r) => r.detail === "regions")) {
        return permissionDenied(`The organization's compliance policy allows only the regions ${regions.join(", ")}, and no endpoint of '${model}' (${providers}) is in them.`);
      }
      return permissionDenied(`The organization's compliance policy does not allow any provider of '${model}' (${providers}).`);
    }
    case 1: {
      const reasons = [...new Set(at.map((r) => r.detail))].join("; ");
      return badRequest(`No provider of '${model}' supports this request: needs ${reasons} (providers: ${providers}).`, "model", "unsupported_request");
    }
    default:
      return badRequest(`The model '${model}' is deactivated on every provider.`, "model", "model_deactivated");
  }
}

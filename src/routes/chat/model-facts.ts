/**
 * Small pure helpers of the chat pipeline (execute.ts): the model a body names, how the model id
 * resolves for a key, which provider it pins, what admission bounds for a candidate, and which
 * attempts feed the shared provider metrics.
 */
import type { KeyContext } from "../../context/key-context";
import { emptyUsage, type ChatRequest, type NormalizedUsage } from "../../providers/types";
import { estimateTextTokens, type BoundTarget } from "../../billing/estimate";
import { adapterFor } from "../../providers/registry";
import { parseModelId, type ResolvedModel } from "../../routing/parse-model-id";
import type { Candidate } from "../../routing/candidates";
import type { AttemptSample } from "../../routing/metrics";
import { sharesProviderMetrics } from "../../routing/credentials";
import { metricsProviderId } from "../../routing/candidate-stats";

/** The `model` of a raw body, or "" (for the log of a request refused before validation). */
export const requestedModelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && typeof (body as Record<string, unknown>).model === "string"
    ? ((body as Record<string, unknown>).model as string)
    : "";

export const resolve = (auth: KeyContext, req: ChatRequest): ResolvedModel =>
  parseModelId(req.model, { keyKind: auth.key.kind, customProviders: auth.customProviders, customModels: auth.customModels });

export const isCreditPaid = (c: Candidate): boolean => c.credential.source === "credits";

/** A candidate for admission's bound, with the output cap its adapter really sends upstream. */
export function boundTarget(req: ChatRequest, c: Candidate): BoundTarget {
  const outputTokens = adapterFor(c.provider.wireFormat).outputTokensBound?.(req, c.mapping);
  return outputTokens === undefined ? c.mapping : { ...c.mapping, outputTokens };
}

export const responseModelOf = (r: ResolvedModel): string => (r.kind === "custom" ? `${r.provider.name}/${r.model.modelId}` : r.model.id);
export const requestedProviderOf = (r: ResolvedModel): string | null =>
  r.kind === "custom" ? `custom:${r.provider.name}` : r.pinned ? r.pinned.providerId : null;

/** Usage estimated from text when a stream ended without the provider reporting any. */
export function estimatedUsage(promptTokens: number, text: string): NormalizedUsage {
  return { ...emptyUsage(), promptTokens, completionTokens: estimateTextTokens(text) };
}

/**
 * Adds an attempt to the shared provider metrics that route everyone's traffic, unless an
 * organization's own upstream served it (custom provider, BYOK key with its own base URL): one
 * tenant's endpoint must not move the shared provider's uptime.
 */
export function recordSample(
  samples: AttemptSample[],
  cand: Candidate,
  outcome: AttemptSample["outcome"],
  ttftMs: number | null,
  outputTokens: number,
  generationMs: number | null,
): void {
  if (!sharesProviderMetrics(cand.credential)) return;
  samples.push({ provider: metricsProviderId(cand), model: cand.modelId, at: Date.now(), outcome, ttftMs, outputTokens, generationMs });
}

/**
 * Where and how a Gemini request goes. AI Studio (`google-ai-studio`) and Vertex AI
 * (`google-vertex`) share the body; they differ in path and auth, expressed here as data.
 */
import type { ProviderId, ProviderMapping } from "../../catalog/types";
import type { UpstreamTarget } from "../types";
import { vertexAuthHeaders } from "./vertex-auth";

interface GeminiVariant {
  /** Path (after the base URL) of the model resource, without the `:method` suffix. */
  modelPath(target: UpstreamTarget): string;
  authHeaders(target: UpstreamTarget): Record<string, string> | Promise<Record<string, string>>;
  /**
   * Path of a Claude model, where the platform serves Anthropic's models in Anthropic's own
   * Messages format (Vertex: publisher `anthropic`, `:rawPredict`); absent: no Claude here.
   */
  claudePath?(target: UpstreamTarget): string;
}

const vertexModelPath = (t: UpstreamTarget, publisher: string) =>
  `/v1/projects/${encodeURIComponent(t.settings.GOOGLE_VERTEX_PROJECT ?? "-")}/locations/${encodeURIComponent(t.settings.GOOGLE_VERTEX_LOCATION ?? "global")}/publishers/${publisher}/models/${encodeURIComponent(t.mapping.externalId)}`;

const AI_STUDIO: GeminiVariant = {
  modelPath: (t) => `/v1beta/models/${encodeURIComponent(t.mapping.externalId)}`,
  authHeaders: (t) => ({ "x-goog-api-key": t.apiKey }),
};

const VERTEX: GeminiVariant = {
  modelPath: (t) => vertexModelPath(t, "google"),
  authHeaders: vertexAuthHeaders,
  claudePath: (t) => vertexModelPath(t, "anthropic"),
};

const VARIANTS: Partial<Record<ProviderId, GeminiVariant>> = { "google-vertex": VERTEX };

export async function geminiEndpoint(target: UpstreamTarget, stream: boolean): Promise<{ url: string; headers: Record<string, string> }> {
  const variant = VARIANTS[target.provider.id] ?? AI_STUDIO;
  const method = stream ? ":streamGenerateContent?alt=sse" : ":generateContent";
  return { url: `${target.baseUrl}${variant.modelPath(target)}${method}`, headers: await variant.authHeaders(target) };
}

/** Claude model ids as the platforms that host them spell them (`claude-sonnet-4@20250514`). */
const CLAUDE_ID = /^claude-/;

/** Whether this mapping is Claude on a platform that serves it in Anthropic's format (Vertex). */
export const servesClaude = (mapping: Pick<ProviderMapping, "providerId" | "externalId">): boolean =>
  VARIANTS[mapping.providerId]?.claudePath !== undefined && CLAUDE_ID.test(mapping.externalId);

/** Where a Claude request goes (`:rawPredict`, `:streamRawPredict`) and its auth headers. */
export async function claudeEndpoint(target: UpstreamTarget, stream: boolean): Promise<{ url: string; headers: Record<string, string> }> {
  const variant = VARIANTS[target.provider.id];
  if (!variant?.claudePath) throw new Error(`${target.provider.id} serves no Claude models`);
  return { url: `${target.baseUrl}${variant.claudePath(target)}:${stream ? "streamRawPredict" : "rawPredict"}`, headers: await variant.authHeaders(target) };
}

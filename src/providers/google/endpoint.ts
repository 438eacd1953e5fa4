/**
 * Where and how a Gemini request goes. AI Studio (`google-ai-studio`) and Vertex AI
 * (`google-vertex`) share the body; they differ in path and auth, expressed here as data.
 */
import type { ProviderId } from "../../catalog/types";
import type { UpstreamTarget } from "../types";
import { vertexAuthHeaders } from "./vertex-auth";

interface GeminiVariant {
  /** Path (after the base URL) of the model resource, without the `:method` suffix. */
  modelPath(target: UpstreamTarget): string;
  authHeaders(target: UpstreamTarget): Record<string, string> | Promise<Record<string, string>>;
}

const AI_STUDIO: GeminiVariant = {
  modelPath: (t) => `/v1beta/models/${encodeURIComponent(t.mapping.externalId)}`,
  authHeaders: (t) => ({ "x-goog-api-key": t.apiKey }),
};

const VERTEX: GeminiVariant = {
  modelPath: (t) =>
    `/v1/projects/${encodeURIComponent(t.settings.GOOGLE_VERTEX_PROJECT ?? "-")}/locations/${encodeURIComponent(t.settings.GOOGLE_VERTEX_LOCATION ?? "global")}/publishers/google/models/${encodeURIComponent(t.mapping.externalId)}`,
  authHeaders: vertexAuthHeaders,
};

const VARIANTS: Partial<Record<ProviderId, GeminiVariant>> = { "google-vertex": VERTEX };

export async function geminiEndpoint(target: UpstreamTarget, stream: boolean): Promise<{ url: string; headers: Record<string, string> }> {
  const variant = VARIANTS[target.provider.id] ?? AI_STUDIO;
  const method = stream ? ":streamGenerateContent?alt=sse" : ":generateContent";
  return { url: `${target.baseUrl}${variant.modelPath(target)}${method}`, headers: await variant.authHeaders(target) };
}

/**
 * Azure OpenAI: the OpenAI body and parsers, with Azure's deployment URL, `api-version` query and
 * `api-key` header. `target.mapping.externalId` is the deployment name.
 */
import type { BuildOptions, ChatRequest, ProviderAdapter, UpstreamCall, UpstreamTarget } from "../types";
import { upstreamPost } from "../types";
import { buildOpenAIBody } from "../openai/request";
import { openaiAdapter } from "../openai";

export const AZURE_DEFAULT_API_VERSION = "2024-10-21";

export function azureChatUrl(target: UpstreamTarget): string {
  const version = target.settings.AZURE_API_VERSION ?? AZURE_DEFAULT_API_VERSION;
  return `${target.baseUrl}/openai/deployments/${encodeURIComponent(target.mapping.externalId)}/chat/completions?api-version=${encodeURIComponent(version)}`;
}

const azureCall = (req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): UpstreamCall =>
  upstreamPost(
    azureChatUrl(target),
    { "content-type": "application/json", "api-key": target.apiKey, accept: opts.stream ? "text/event-stream" : "application/json" },
    JSON.stringify(buildOpenAIBody(req, target, opts)),
    opts.signal,
  );

export const azureAdapter: ProviderAdapter = {
  buildCall: azureCall,
  parseResponse: openaiAdapter.parseResponse,
  parseStream: openaiAdapter.parseStream,
  parseError: openaiAdapter.parseError,
};

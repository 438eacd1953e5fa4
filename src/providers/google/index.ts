/**
 * Google Gemini wire format (AI Studio generateContent and Vertex AI publishers/google models),
 * and Claude on Vertex AI, which Vertex serves in Anthropic's format (vertex-claude.ts).
 */
import type { BuildOptions, ChatRequest, ProviderAdapter, UpstreamCall, UpstreamTarget } from "../types";
import { upstreamPost } from "../types";
import { parseErrorBody } from "../error-body";
import { geminiEndpoint, servesClaude } from "./endpoint";
import { buildGeminiBody } from "./request";
import { parseGeminiResponse } from "./response";
import { parseGeminiStream } from "./stream";
import { parseVertexClaudeResponse, parseVertexClaudeStream, vertexClaudeCall, vertexClaudeOutputTokensBound } from "./vertex-claude";

async function googleCall(req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): Promise<UpstreamCall> {
  if (servesClaude(target.mapping)) return vertexClaudeCall(req, target, opts);
  const { url, headers } = await geminiEndpoint(target, opts.stream);
  return upstreamPost(url, { ...headers, "content-type": "application/json", accept: opts.stream ? "text/event-stream" : "application/json" }, JSON.stringify(buildGeminiBody(req, target)), opts.signal);
}

export const googleAdapter: ProviderAdapter = {
  buildCall: googleCall,
  parseResponse: (body, target, req) => (servesClaude(target.mapping) ? parseVertexClaudeResponse(body, req) : parseGeminiResponse(body)),
  parseStream: (body, target, req) => (servesClaude(target.mapping) ? parseVertexClaudeStream(body, req) : parseGeminiStream(body)),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
  // Gemini's cap is the caller's (within the model's maximum, admission's default); Claude's
  // thinking raises it as on Anthropic's API.
  outputTokensBound: (req, mapping) =>
    servesClaude(mapping) ? vertexClaudeOutputTokensBound(req, mapping) : Math.min(req.max_completion_tokens ?? req.max_tokens ?? mapping.maxOutput, mapping.maxOutput),
  // Claude on Vertex: a forced tool call (Gemini's JSON output is the catalogue's flags).
  servesJsonOutput: (mapping) => servesClaude(mapping) && mapping.tools,
};

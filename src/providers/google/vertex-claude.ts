/**
 * Claude on Vertex AI: Anthropic's Messages format through `:rawPredict` / `:streamRawPredict` on
 * the `anthropic` publisher, with Vertex's auth. The body is Anthropic's without `model` (it is
 * in the path) and with `anthropic_version: "vertex-2023-10-16"`; the answer is Anthropic's, parsed
 * by the Anthropic adapter's parsers. Structured outputs go through the forced tool: Vertex's
 * Claude is not among the platforms with Anthropic's native JSON output.
 */
import type { ProviderMapping } from "../../catalog/types";
import type { BuildOptions, ChatRequest, ParsedCompletion, StreamEvent, UpstreamCall, UpstreamTarget } from "../types";
import { upstreamPost } from "../types";
import { anthropicOutputTokensBound, buildAnthropicBody } from "../anthropic/request";
import { parseAnthropicResponse } from "../anthropic/response";
import { parseAnthropicStream } from "../anthropic/stream";
import { foldOutputTool, foldOutputToolStream, jsonOutputPlan, planForcesTool, withJsonOutput, type JsonOutputPlan } from "../anthropic/structured-output";
import { claudeEndpoint } from "./endpoint";

export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

const vertexClaudePlan = (req: ChatRequest): JsonOutputPlan => jsonOutputPlan(req, false);

export async function vertexClaudeCall(req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): Promise<UpstreamCall> {
  const { url, headers } = await claudeEndpoint(target, opts.stream);
  const { model: _inPath, ...body } = buildAnthropicBody(req, target, { stream: opts.stream, plan: vertexClaudePlan(req) });
  return upstreamPost(
    url,
    { ...headers, "content-type": "application/json", accept: opts.stream ? "text/event-stream" : "application/json" },
    JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body }),
    opts.signal,
  );
}

export const parseVertexClaudeResponse = (body: unknown, req: ChatRequest | undefined): ParsedCompletion =>
  withJsonOutput(req && vertexClaudePlan(req), parseAnthropicResponse(body), foldOutputTool);

export const parseVertexClaudeStream = (body: ReadableStream<Uint8Array>, req: ChatRequest | undefined): AsyncIterable<StreamEvent> =>
  withJsonOutput(req && vertexClaudePlan(req), parseAnthropicStream(body), foldOutputToolStream);

/** As Anthropic's bound, with Vertex's plan (a forced output tool turns thinking off). */
export const vertexClaudeOutputTokensBound = (req: ChatRequest, mapping: ProviderMapping): number =>
  planForcesTool(vertexClaudePlan(req)) ? (req.max_completion_tokens ?? req.max_tokens ?? mapping.maxOutput) : anthropicOutputTokensBound(req, mapping);

/** AWS Bedrock Converse API wire format (SigV4 or Bedrock API key). */
import type { BuildOptions, ChatRequest, ProviderAdapter, UpstreamCall, UpstreamTarget } from "../types";
import { parseErrorBody } from "../error-body";
import { authorizedBedrockPost } from "./auth";
import { bedrockJsonPlan, buildConverseBody, converseOutputTokensBound, isBedrockClaude } from "./request";
import { foldOutputTool, foldOutputToolStream, withJsonOutput } from "../anthropic/structured-output";
import { parseBedrockResponse } from "./response";
import { parseBedrockStream } from "./stream";

export function converseUrl(target: UpstreamTarget, stream: boolean): string {
  return `${target.baseUrl}/model/${encodeURIComponent(target.mapping.externalId)}/${stream ? "converse-stream" : "converse"}`;
}

const bedrockCall = (req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): Promise<UpstreamCall> =>
  authorizedBedrockPost(
    converseUrl(target, opts.stream),
    { "content-type": "application/json", accept: opts.stream ? "application/vnd.amazon.eventstream" : "application/json" },
    JSON.stringify(buildConverseBody(req, target)),
    target,
    opts.signal,
  );

export const bedrockAdapter: ProviderAdapter = {
  buildCall: bedrockCall,
  parseResponse: (body, target, req) => withJsonOutput(req && bedrockJsonPlan(req, target.mapping), parseBedrockResponse(body), foldOutputTool),
  parseStream: (body, target, req) => withJsonOutput(req && bedrockJsonPlan(req, target.mapping), parseBedrockStream(body), foldOutputToolStream),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
  outputTokensBound: converseOutputTokensBound,
  // Claude on Bedrock: natively where the model has it, else a forced tool call.
  servesJsonOutput: (mapping) => isBedrockClaude(mapping) && mapping.tools,
};

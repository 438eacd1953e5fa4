/** AWS Bedrock Converse API wire format (SigV4 or Bedrock API key). */
import type { ProviderAdapter, UpstreamTarget } from "../types";
import { upstreamInit } from "../types";
import { parseErrorBody } from "../error-body";
import { authorizeBedrock } from "./auth";
import { bedrockJsonPlan, buildConverseBody, converseOutputTokensBound, isBedrockClaude } from "./request";
import { foldOutputTool, foldOutputToolStream, withJsonOutput } from "../anthropic/structured-output";
import { parseBedrockResponse } from "./response";
import { parseBedrockStream } from "./stream";

export function converseUrl(target: UpstreamTarget, stream: boolean): string {
  return `${target.baseUrl}/model/${encodeURIComponent(target.mapping.externalId)}/${stream ? "converse-stream" : "converse"}`;
}

export const bedrockAdapter: ProviderAdapter = {
  async buildRequest(req, target, opts) {
    const request = new Request(converseUrl(target, opts.stream), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: opts.stream ? "application/vnd.amazon.eventstream" : "application/json",
      },
      body: JSON.stringify(buildConverseBody(req, target)),
      ...upstreamInit(opts),
    });
    return authorizeBedrock(request, target);
  },
  parseResponse: (body, target, req) => withJsonOutput(req && bedrockJsonPlan(req, target.mapping), parseBedrockResponse(body), foldOutputTool),
  parseStream: (body, target, req) => withJsonOutput(req && bedrockJsonPlan(req, target.mapping), parseBedrockStream(body), foldOutputToolStream),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
  outputTokensBound: converseOutputTokensBound,
  // Claude on Bedrock: natively where the model has it, else a forced tool call.
  servesJsonOutput: (mapping) => isBedrockClaude(mapping) && mapping.tools,
};

/** Anthropic Messages API wire format. */
import type { ProviderAdapter } from "../types";
import { parseErrorBody } from "../error-body";
import { anthropicJsonPlan, anthropicCall, anthropicOutputTokensBound } from "./request";
import { parseAnthropicResponse } from "./response";
import { parseAnthropicStream } from "./stream";
import { countAnthropicTokens } from "./count-tokens";
import { foldOutputTool, foldOutputToolStream, withJsonOutput } from "./structured-output";

export const anthropicAdapter: ProviderAdapter = {
  buildCall: anthropicCall,
  parseResponse: (body, target, req) => withJsonOutput(req && anthropicJsonPlan(req, target.mapping), parseAnthropicResponse(body), foldOutputTool),
  parseStream: (body, target, req) => withJsonOutput(req && anthropicJsonPlan(req, target.mapping), parseAnthropicStream(body), foldOutputToolStream),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
  outputTokensBound: anthropicOutputTokensBound,
  // Every Claude mapping that takes tools: natively where the model has it, else a forced tool call.
  servesJsonOutput: (mapping) => mapping.tools,
  countTokens: countAnthropicTokens,
};

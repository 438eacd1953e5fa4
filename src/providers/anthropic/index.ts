/** Anthropic Messages API wire format. */
import type { ProviderAdapter } from "../types";
import { parseErrorBody } from "../error-body";
import { anthropicOutputTokensBound, buildAnthropicRequest } from "./request";
import { parseAnthropicResponse } from "./response";
import { parseAnthropicStream } from "./stream";

export const anthropicAdapter: ProviderAdapter = {
  buildRequest: (req, target, opts) => Promise.resolve(buildAnthropicRequest(req, target, opts)),
  parseResponse: (body) => parseAnthropicResponse(body),
  parseStream: (body) => parseAnthropicStream(body),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
  outputTokensBound: anthropicOutputTokensBound,
};

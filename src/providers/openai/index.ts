/** OpenAI-compatible wire format: OpenAI, Groq, Together, Mistral, DeepSeek, xAI, custom providers... */
import type { ProviderAdapter } from "../types";
import { parseErrorBody } from "../error-body";
import { openAICall } from "./request";
import { parseOpenAIResponse } from "./response";
import { parseOpenAIStream } from "./stream";

export const openaiAdapter: ProviderAdapter = {
  buildCall: openAICall,
  parseResponse: (body) => parseOpenAIResponse(body),
  parseStream: (body) => parseOpenAIStream(body),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
};

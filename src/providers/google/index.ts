/** Google Gemini wire format (AI Studio generateContent and Vertex AI publishers/google models). */
import type { ProviderAdapter } from "../types";
import { upstreamInit } from "../types";
import { parseErrorBody } from "../error-body";
import { geminiEndpoint } from "./endpoint";
import { buildGeminiBody } from "./request";
import { parseGeminiResponse } from "./response";
import { parseGeminiStream } from "./stream";

export const googleAdapter: ProviderAdapter = {
  async buildRequest(req, target, opts) {
    const { url, headers } = await geminiEndpoint(target, opts.stream);
    return new Request(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: opts.stream ? "text/event-stream" : "application/json" },
      body: JSON.stringify(buildGeminiBody(req, target)),
      ...upstreamInit(opts),
    });
  },
  parseResponse: (body) => parseGeminiResponse(body),
  parseStream: (body) => parseGeminiStream(body),
  parseError: (status, bodyText) => parseErrorBody(status, bodyText),
};

/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (Anthropic Messages API, 2023-06-01):
 * a front door to the chat pipeline. Keys come as `x-api-key` or `Authorization: Bearer`;
 * `anthropic-version` and `anthropic-beta` are accepted and ignored. Errors use Anthropic's
 * envelope `{"type":"error","error":{"type","message"}}` with the status the gateway chose.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { estimatePromptTokens } from "../../billing/estimate";
import { reencodeChatSse, type CompletionJson } from "../chat-sse";
import { capToModelOutput, dialectErrors, jsonWithHeaders, readJsonBody, runChat } from "../edge";
import { parseCountTokensRequest, parseMessagesRequest, toChatRequest } from "./request";
import { anthropicErrorType, errorBody, messageFromCompletion, newMessageId } from "./response";
import { MessagesStreamEncoder } from "./stream";

export const messagesRoutes = new Hono<AppEnv>();

messagesRoutes.use(
  "*",
  dialectErrors((status, e) => errorBody(anthropicErrorType(status), e.param && !e.message.includes(e.param) ? `${e.message} (${e.param})` : e.message)),
);

messagesRoutes.post("/", requireGatewayKey({ spend: true }), async (c) => {
  const req = parseMessagesRequest(await readJsonBody(c));
  const chatReq = capToModelOutput(toChatRequest(req));
  const res = await runChat(c, chatReq);
  // The client went away before the first byte: the pipeline's bodiless 499, nothing to translate.
  if (!res.body) return res;
  const id = newMessageId();
  if (chatReq.stream && res.body) {
    return new Response(reencodeChatSse(res.body, new MessagesStreamEncoder(id, req.model)), { status: res.status, headers: res.headers });
  }
  const completion = (await res.json()) as CompletionJson;
  return jsonWithHeaders(messageFromCompletion({ ...completion, model: req.model }, id), res);
});

/**
 * An estimate, not the provider's tokenizer: the same estimate admission uses
 * (src/billing/estimate.ts: ~4 characters per token of text and tool definitions, 1,000 per image
 * or document, 4 per message). It errs high for English prose and is close for code.
 */
messagesRoutes.post("/count_tokens", requireGatewayKey({ spend: false }), async (c) => {
  const req = parseCountTokensRequest(await readJsonBody(c));
  return c.json({ input_tokens: estimatePromptTokens(toChatRequest(req)) });
});

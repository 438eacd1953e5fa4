/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens` (Anthropic Messages API, 2023-06-01):
 * a front door to the chat pipeline. Keys come as `x-api-key` or `Authorization: Bearer`;
 * `anthropic-version` and `anthropic-beta` are accepted and ignored. Errors use Anthropic's
 * envelope `{"type":"error","error":{"type","message"}}` with the status the gateway chose.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { gatewayRequest } from "../../routes/middleware/gateway-request";
import { countInputTokens, TOKEN_COUNT_HEADER } from "./count-tokens";
import { reencodeChatSse, type CompletionJson } from "../chat-sse";
import { capToModelOutput, dialectErrors, jsonWithHeaders, runChat } from "../edge";
import { readJsonBody } from "../../routes/middleware/json-body";
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
  // The pipeline's `model` is the caller's own spelling, or the fallback model's id when one served.
  return jsonWithHeaders(messageFromCompletion(completion, id), res);
});

/**
 * Exact through the provider's own counter where the model routes to one (Claude on Anthropic's
 * API), else the estimate admission uses; `x-gateway-token-count: exact | estimate` says which
 * (count-tokens.ts). Never billed.
 */
messagesRoutes.post("/count_tokens", requireGatewayKey({ spend: false }), async (c) => {
  const req = parseCountTokensRequest(await readJsonBody(c));
  const counted = await countInputTokens(gatewayRequest(c), toChatRequest(req));
  return c.json({ input_tokens: counted.inputTokens }, 200, { [TOKEN_COUNT_HEADER]: counted.source });
});

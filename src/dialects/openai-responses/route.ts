/**
 * `POST /v1/responses` (OpenAI Responses API): a front door to the chat pipeline, for every model
 * in the catalogue (OpenAI's included: they are translated too, not passed through, so routing,
 * failover and pricing stay the same for all). Stateless: `previous_response_id` is refused
 * (src/dialects/openai-responses/request.ts). Errors keep the gateway's OpenAI envelope.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { reencodeChatSse, type CompletionJson } from "../chat-sse";
import { jsonWithHeaders, runChat } from "../edge";
import { readJsonBody } from "../../routes/middleware/json-body";
import { parseResponsesRequest, toChatRequest } from "./request";
import { newItemId, responseFromCompletion } from "./response";
import { ResponsesStreamEncoder } from "./stream";

export const responsesRoutes = new Hono<AppEnv>();

responsesRoutes.post("/", requireGatewayKey({ spend: true }), async (c) => {
  const req = parseResponsesRequest(await readJsonBody(c));
  const chatReq = toChatRequest(req);
  const res = await runChat(c, chatReq);
  // The client went away before the first byte: the pipeline's bodiless 499, nothing to translate.
  if (!res.body) return res;
  const id = newItemId("resp");
  const createdAt = Math.floor(Date.now() / 1000);
  if (chatReq.stream && res.body) {
    return new Response(reencodeChatSse(res.body, new ResponsesStreamEncoder(req, id, createdAt)), { status: res.status, headers: res.headers });
  }
  return jsonWithHeaders(responseFromCompletion(req, (await res.json()) as CompletionJson, id, createdAt), res);
});

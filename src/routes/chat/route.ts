/** HTTP route: `POST /v1/chat/completions` (spec 4.1). The work is in execute.ts. */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { badRequest } from "../../errors/api-error";
import { gatewayRequest } from "../middleware/gateway-request";
import { executeChatCompletion } from "./execute";

export const chatRoutes = new Hono<AppEnv>();

chatRoutes.post("/completions", requireGatewayKey({ spend: true }), async (c) => {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw badRequest("The request body is not valid JSON.", null, "invalid_json");
  }
  return executeChatCompletion({ ...gatewayRequest(c), headers: c.req.raw.headers, body });
});

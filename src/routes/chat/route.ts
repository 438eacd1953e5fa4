/** HTTP route: `POST /v1/chat/completions` (spec 4.1). The work is in execute.ts. */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { gatewayRequest } from "../middleware/gateway-request";
import { readJsonBody } from "../middleware/json-body";
import { executeChatCompletion } from "./execute";

export const chatRoutes = new Hono<AppEnv>();

chatRoutes.post("/completions", requireGatewayKey({ spend: true }), async (c) => {
  const body = await readJsonBody(c);
  return executeChatCompletion({ ...gatewayRequest(c), headers: c.req.raw.headers, body });
});

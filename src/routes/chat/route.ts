/** HTTP route: `POST /v1/chat/completions` (spec 4.1). The work is in execute.ts. */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireGatewayKey } from "../../auth/gateway-key";
import { badRequest } from "../../errors/api-error";
import { detectSourceApp } from "../../usage/source-app";
import { executeChatCompletion } from "./execute";

/** Client IP for IP rules: first X-Forwarded-For entry, else CF-Connecting-IP. */
export function clientIpOf(headers: Headers): string | null {
  const xff = headers.get("x-forwarded-for");
  const first = xff?.split(",")[0]?.trim();
  if (first) return first;
  return headers.get("cf-connecting-ip")?.trim() || null;
}

export const chatRoutes = new Hono<AppEnv>();

chatRoutes.post("/completions", requireGatewayKey({ spend: true }), async (c) => {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw badRequest("The request body is not valid JSON.", null, "invalid_json");
  }
  const headers = c.req.raw.headers;
  return executeChatCompletion({
    env: c.env,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
    auth: c.get("keyAuth"),
    requestId: c.get("requestId"),
    sourceApp: detectSourceApp(headers),
    clientIp: clientIpOf(headers),
    headers,
    body,
  });
});

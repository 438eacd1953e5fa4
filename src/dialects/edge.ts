/**
 * The edge of a dialect route: run the ONE chat pipeline
 * (src/routes/chat/execute.ts: auth, IAM, admission, credits/BYOK, routing + failover, cache,
 * request log, cost, x-request-id) on the translated request, and re-render errors in the
 * dialect's own envelope. Nothing here knows a provider.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-types";
import { parseModelRef } from "../catalog";
import type { ChatRequest } from "../providers/types";
import { chatRequestBody } from "../providers/tool-call-wire";
import { executeChatCompletion } from "../routes/chat/execute";
import { gatewayRequest } from "../routes/middleware/gateway-request";

/**
 * The chat pipeline's Response (OpenAI JSON or SSE) for a translated request. Its `model` (and each
 * chunk's) is the caller's own spelling when the requested model served, else the id of the
 * fallback model that did: the dialect answers with it, as /v1/chat/completions does.
 */
export function runChat(c: Context<AppEnv>, req: ChatRequest): Promise<Response> {
  // The pipeline validates the body as a caller's chat request, so custom tools and calls go in OpenAI's shape.
  return executeChatCompletion({ ...gatewayRequest(c), headers: c.req.raw.headers, body: chatRequestBody(req), echoRequestedModel: true });
}

/** The gateway's own error envelope, as src/errors renders it. */
export interface GatewayError {
  message: string;
  type?: string;
  code?: string | null;
  param?: string | null;
}

/**
 * Re-renders every error answer of the routes below it (auth, validation, the pipeline's 4xx/5xx,
 * all produced once by the existing onError) in the dialect's envelope; status and headers
 * (x-request-id, retry-after) are kept.
 */
export function dialectErrors(render: (status: number, error: GatewayError) => unknown): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !(res.headers.get("content-type") ?? "").includes("json")) return;
    let body: unknown;
    try {
      body = await res.clone().json();
    } catch {
      return;
    }
    const error = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
    if (typeof error !== "object" || error === null || typeof (error as GatewayError).message !== "string") return;
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    c.res = new Response(JSON.stringify(render(res.status, error as GatewayError)), { status: res.status, headers });
  };
}

/** A JSON answer carrying the pipeline's headers (x-request-id, x-gateway-overhead-ms). */
export function jsonWithHeaders(body: unknown, from: Response): Response {
  const headers = new Headers(from.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify(body), { status: from.status, headers });
}

/**
 * Anthropic's `max_tokens` is mandatory, so clients send a generous ceiling (Claude Code: 32,000)
 * rather than a need: it is lowered to the largest output the model's mappings allow, instead of
 * making every smaller model ineligible. Custom models are left as sent.
 */
export function capToModelOutput(req: ChatRequest): ChatRequest {
  if (req.max_tokens === undefined) return req;
  const ref = parseModelRef(req.model.trim());
  if (ref.kind === "unknown") return req;
  const outputs = (ref.kind === "pinned" ? [ref.mapping] : ref.model.mappings).map((m) => m.maxOutput).filter((n) => n > 0);
  const cap = outputs.length ? Math.max(...outputs) : 0;
  return cap > 0 && req.max_tokens > cap ? { ...req, max_tokens: cap } : req;
}

/**
 * MCP authentication (spec 5.2, 5.3): `Authorization: Bearer` or `x-api-key` with a gateway key
 * (coding-plan keys too) or an OAuth access token. Either way the result is the key's
 * KeyContext, confirmed live by its KeyState DO (`checkKey`: liveness, no spend admission, so
 * analytics stay available past a spend limit; generation tools admit spend themselves).
 *
 * The key's IP rules are judged here too, on the same client IP as the HTTP doors: a
 * client outside them is authenticated (so `initialize` and `tools/list` work) but every tool
 * call is a tool error with the IAM message (`refusal`, applied by src/mcp/server.ts).
 *
 * Failures become 401 with a JSON-RPC error body and the RFC 9728 `WWW-Authenticate` challenge.
 * The account's rate limits (src/rate-limits/: the organization's and the key's) count every call.
 */
import type { Env } from "../env";
import { ApiError } from "../errors/api-error";
import { checkKey, ipRefusal, resolveGatewayKey } from "../auth/gateway-key";
import { clientIpOf } from "../iam/cidr";
import { readKeyContextById, type KeyContext } from "../context/key-context";
import { cacheContext, getCachedContext } from "../auth/key-cache";
import { looksLikeGatewayKey } from "../lib/crypto";
import { resolveAccessToken } from "../oauth/tokens";
import { allowsMcp, DEFAULT_SCOPE, issuerOrigin, resourceMetadataUrl } from "../oauth/metadata";
import { admitRate } from "../rate-limits/admission";

/** JSON-RPC error codes used by the transport (server-defined range). */
export const JSONRPC_UNAUTHORIZED = -32001;
export const JSONRPC_RATE_LIMITED = -32029;

export interface McpAuth {
  context: KeyContext;
  /** How the caller authenticated. */
  via: "api_key" | "oauth";
  oauthClientId: string | null;
  /** Set when the key's IP rules refuse this client: every tool call answers it as a tool error. */
  refusal: string | null;
}

/**
 * The RFC 6750 / RFC 9728 challenge of a 401: always the resource metadata URL and the scope; the
 * `invalid_token` error only when credentials were presented (RFC 6750 3.1: a request without any
 * authentication information gets no error code).
 */
export function bearerChallenge(env: Env, request: Request, message: string): string {
  const base = `Bearer resource_metadata="${resourceMetadataUrl(issuerOrigin(env, request))}", scope="${DEFAULT_SCOPE}"`;
  if (presentedToken(request.headers) === null) return base;
  return `${base}, error="invalid_token", error_description="${message.replace(/["\\]/g, "'")}"`;
}

export function presentedToken(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1] ?? null;
  }
  const apiKey = headers.get("x-api-key");
  return apiKey ? apiKey.trim() : null;
}

/** Key id -> fingerprint, so OAuth requests can reuse the isolate's KeyContext cache. */
const fingerprintById = new Map<string, string>();

async function contextForKeyId(env: Env, keyId: string): Promise<KeyContext | null> {
  const fp = fingerprintById.get(keyId);
  const cached = fp ? getCachedContext(fp) : undefined;
  if (cached) return cached;
  const ctx = await readKeyContextById(env.DB, keyId);
  if (!ctx) return null;
  if (fingerprintById.size > 5000) fingerprintById.clear();
  fingerprintById.set(keyId, ctx.key.fingerprint);
  cacheContext(ctx.key.fingerprint, ctx);
  return ctx;
}

/** Authenticates an MCP request, or throws an ApiError (401 for credentials, 503 misconfiguration). */
export async function authenticateMcp(env: Env, headers: Headers): Promise<McpAuth> {
  const token = presentedToken(headers);
  if (token && !looksLikeGatewayKey(token)) {
    const info = await resolveAccessToken(env, token);
    if (!info) throw new ApiError(401, "Invalid or expired access token.", { type: "authentication_error", code: "invalid_token" });
    if (!allowsMcp(info.scope)) {
      // RFC 6750 3.1: a valid token without the scope the resource needs.
      throw new ApiError(403, "This access token was not granted the 'mcp' scope.", {
        type: "permission_error",
        code: "insufficient_scope",
        headers: { "www-authenticate": 'Bearer error="insufficient_scope", scope="mcp"' },
      });
    }
    const ctx = await contextForKeyId(env, info.apiKeyId);
    if (!ctx) throw new ApiError(401, "The API key behind this access token no longer exists.", { type: "authentication_error", code: "invalid_token" });
    const live = await checkKey(env, ctx);
    return { context: live, via: "oauth", oauthClientId: info.clientId, refusal: refusalOf(live, headers) };
  }
  const ctx = await resolveGatewayKey(env, token);
  const live = await checkKey(env, ctx);
  return { context: live, via: "api_key", oauthClientId: null, refusal: refusalOf(live, headers) };
}

const refusalOf = (ctx: KeyContext, headers: Headers): string | null => ipRefusal(ctx, clientIpOf(headers))?.message ?? null;

/**
 * Counts `messages` calls (each message of a JSON-RPC batch) against the account's rate limits,
 * the same windows as `/v1/*` (src/rate-limits/admission.ts); 429 when over.
 */
export async function enforceMcpRateLimit(env: Env, ctx: KeyContext, messages = 1, waitUntil?: (p: Promise<unknown>) => void): Promise<void> {
  const verdict = await admitRate(env, ctx, Math.max(1, Math.floor(messages)), waitUntil);
  if (verdict.error) throw verdict.error;
}

/**
 * A JSON-RPC-friendly error response: `{jsonrpc, id: null, error: {code, message, data}}` plus the
 * spec's envelope under `error.data` so both kinds of clients can read it.
 */
export function jsonRpcErrorResponse(
  env: Env,
  request: Request,
  err: ApiError,
  id: string | number | null = null,
): Response {
  const headers = new Headers({ "content-type": "application/json" });
  for (const [k, v] of Object.entries(err.extraHeaders)) headers.set(k, v);
  if (err.status === 401) headers.set("www-authenticate", bearerChallenge(env, request, err.message));
  const code = err.status === 401 ? JSONRPC_UNAUTHORIZED : err.status === 429 ? JSONRPC_RATE_LIMITED : -32000;
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id, error: { code, message: err.message, data: err.toEnvelope().error } }),
    { status: err.status, headers },
  );
}

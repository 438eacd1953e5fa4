/** Discovery documents: RFC 8414 (authorization server) and RFC 9728 (protected resource). */
import type { Env } from "../env";
import { gatewayOrigin } from "../env";

/**
 * The issuer and resource origin: `PUBLIC_URL` when configured (docs/security.md), never the
 * request's Host header in that case; without it (local runs, tests) the request's own origin.
 * Every absolute URL Switchboard shows for itself in OAuth and MCP (discovery, challenges, the
 * `/mcp` server info and setup page) is built on it, so behind a proxy none names the inner host.
 */
export const issuerOrigin = (env: Env, request: Request): string => gatewayOrigin(env, request);
export const SCOPES_SUPPORTED = ["mcp"] as const;
export const DEFAULT_SCOPE = "mcp";

/**
 * The scope granted for a requested one (RFC 6749 3.3): the supported scopes it names, space
 * separated; the default when none is requested; null when it names none we support
 * (`invalid_scope`). Unknown scopes next to a supported one are dropped, and the token response
 * says what was granted, as the RFC allows.
 */
export function grantedScope(requested: string | undefined): string | null {
  if (requested === undefined || requested.trim() === "") return DEFAULT_SCOPE;
  const names = new Set(requested.trim().split(/\s+/));
  const granted = SCOPES_SUPPORTED.filter((s) => names.has(s));
  return granted.length ? granted.join(" ") : null;
}

/** Whether a grant's scope allows the MCP endpoints (grants stored before scopes were checked have none). */
export const allowsMcp = (scope: string | null): boolean => scope === null || scope.split(" ").includes("mcp");

export function authorizationServerMetadata(origin: string) {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    scopes_supported: [...SCOPES_SUPPORTED],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    service_documentation: `${origin}/mcp`,
  };
}

/** Where the protected resource metadata of `/mcp` is served: named by 401 challenges and the `/mcp` server info alike. */
export const resourceMetadataUrl = (origin: string): string => `${origin}/.well-known/oauth-protected-resource`;

export function protectedResourceMetadata(origin: string) {
  return {
    resource: `${origin}/mcp`,
    authorization_servers: [origin],
    scopes_supported: [...SCOPES_SUPPORTED],
    bearer_methods_supported: ["header"],
    resource_name: "Switchboard MCP server",
  };
}

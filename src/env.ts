/**
 * Bindings come from `wrangler types` (src/worker-configuration.d.ts, `npm run types`).
 * Secrets are not in wrangler.jsonc, so they are declared here (contract section 1).
 */
declare global {
  namespace Cloudflare {
    interface Env {
      /** Operator secret for the bootstrap API. Unset: the bootstrap API answers 404. */
      ADMIN_TOKEN?: string;
      /** HMAC-SHA-256 secret for key fingerprints (and, via HKDF, provider-key encryption). */
      KEY_HASH_SECRET?: string;
      /** Enables saving generate-nano-banana images under this prefix of UPLOADS. */
      UPLOAD_DIR?: string;
      /**
       * The gateway's public origin, e.g. `https://gateway.example.com` (docs/security.md). OAuth
       * discovery and links in e-mails use it instead of the request's Host header.
       */
      PUBLIC_URL?: string;
      /**
       * A separate origin for video content (`content_url`s), e.g. `https://media.gateway.example.com`
       * routed to the same Worker; that host serves only the content route (docs/security.md).
       */
      VIDEO_CONTENT_ORIGIN?: string;
      /**
       * Further browser origins (comma-separated) allowed to call `/mcp`, besides the gateway's own
       * (src/mcp/origin.ts). Any other `Origin` is refused with 403.
       */
      ALLOWED_ORIGINS?: string;
      /** Outbound deliveries (OpenTelemetry spans, webhook events): the queue src/integrations/deliveries.ts consumes. */
      DELIVERIES: Queue;
      /** Seconds before the first retry of a failed delivery, doubling per attempt (default 10, at most an hour). */
      DELIVERY_RETRY_BASE_SECONDS?: string;
    }
  }
}

export type Env = Cloudflare.Env;

/** `production` enforces the SSRF guard on custom provider URLs; `development`/`test` allow loopback. */
export const isProduction = (env: Env): boolean => env.ENVIRONMENT === "production";

/** Provider credentials are dynamic `<ID>_API_KEY` / `<ID>_BASE_URL` vars; read them through here. */
export function envVar(env: Env, name: string): string | undefined {
  const value = (env as unknown as Record<string, unknown>)[name];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** `google-ai-studio` -> `GOOGLE_AI_STUDIO` (contract section 1). */
export const providerEnvPrefix = (providerId: string): string => providerId.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * The origin Switchboard names itself with in absolute URLs (OAuth issuer, MCP info, video
 * content URLs, the OpenAPI server): `PUBLIC_URL` when configured, never the request's Host header
 * then (behind a proxy that would be the inner host); without it, the request's own origin.
 */
export const gatewayOrigin = (env: Env, request: Request): string => publicOrigin(env) ?? new URL(request.url).origin;

/** A configured URL setting as an origin (no trailing slash), or null when unset or not an http(s) URL. */
export function httpOriginOf(setting: string | undefined): string | null {
  const raw = setting?.trim();
  if (!raw) return null;
  try {
    const u = new URL(raw);
    return u.protocol === "https:" || u.protocol === "http:" ? u.origin : null;
  } catch {
    return null;
  }
}

/** `PUBLIC_URL` as an origin (no trailing slash), or null when unset or not an http(s) URL. */
export const publicOrigin = (env: Env): string | null => httpOriginOf(env.PUBLIC_URL);

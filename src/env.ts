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
      /**
       * Upstream timeouts in ms (src/routing/timeouts.ts, docs/routing-and-cache.md "Timeouts"):
       * the first-byte bound before there is evidence (15000) and the bounds of one derived from
       * the measured p99 (10000, 30000); the whole answer (120000); the longest silence between two
       * chunks of a stream (30000); the range a caller's `x-first-byte-timeout-ms` / `x-timeout-ms`
       * may ask for (1000, 300000); the hedge delay before there is evidence (2000).
       */
      FIRST_BYTE_TIMEOUT_MS?: string;
      FIRST_BYTE_TIMEOUT_MIN_MS?: string;
      FIRST_BYTE_TIMEOUT_MAX_MS?: string;
      UPSTREAM_TIMEOUT_MS?: string;
      STREAM_IDLE_TIMEOUT_MS?: string;
      TIMEOUT_OVERRIDE_MIN_MS?: string;
      TIMEOUT_OVERRIDE_MAX_MS?: string;
      HEDGE_AFTER_MS?: string;
      /**
       * How recently (ms, default 30000) the key's object or the D1 primary must have confirmed a
       * key's rules for an isolate to start an upstream call before admission answered
       * (src/context/policy-freshness.ts, docs/admission.md). A rule change applies to every request
       * that starts this long after it returned. Tests shorten it.
       */
      POLICY_FRESHNESS_MS?: string;
      /**
       * Rows of the request window (`request_logs`) kept per organization, besides
       * REQUEST_LOG_WINDOW_HOURS (whichever keeps less; default 2000, 0: no window). Older requests
       * are read from R2 (src/usage/window.ts).
       */
      REQUEST_LOG_WINDOW_ROWS?: string;
      /** Hours an applied log id is remembered (default 24; wrangler.jsonc sets 1). docs/scale.md. */
      LOG_DEDUP_HOURS?: string;
      /**
       * The D1 database's size limit in bytes (default 10 GB, the paid plan; 500000000 on the free
       * plan): above 80% the operator is told, above 90% the request window shrinks itself.
       */
      D1_SIZE_LIMIT_BYTES?: string;
      /** Where operator alerts go (D1 size); unset: they are only logged. */
      OPERATOR_EMAIL?: string;
      /** Outbound deliveries (OpenTelemetry spans, webhook events): the queue src/integrations/deliveries.ts consumes. */
      DELIVERIES: Queue;
      /** Seconds before the first retry of a failed delivery, doubling per attempt (default 10, at most an hour). */
      DELIVERY_RETRY_BASE_SECONDS?: string;
    }
  }
  /**
   * `wrangler types` declares the global `Env` beside `Cloudflare.Env` (both from one generated
   * base); the secrets above and the tests' bindings augment `Cloudflare.Env`, so the global one
   * extends it to stay the same type wherever a file names `Env` without importing it.
   */
  interface Env extends Cloudflare.Env {}
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

/**
 * The identity provider's metadata (OpenID Connect Discovery) through oauth4webapi. The issuer and
 * every endpoint it names pass the same outbound-address guard as custom providers (loopback and
 * plain http only outside production: the tests' provider runs on 127.0.0.1), because an
 * organization owner chooses the issuer and the gateway then calls it.
 */
import * as oauth from "oauth4webapi";
import type { Env } from "../env";
import { isProduction } from "../env";
import { checkUpstreamUrl } from "../lib/ssrf";

/** Metadata read in this isolate, per issuer, for a few minutes (a cache: any isolate can refetch). */
const metadata = new Map<string, { as: oauth.AuthorizationServer; until: number }>();
const METADATA_TTL_MS = 5 * 60_000;
const MAX_ISSUERS = 200;

/** The options every oauth4webapi request of this environment takes. */
export const httpOptions = (env: Env): { [oauth.allowInsecureRequests]?: boolean; signal: AbortSignal } => ({
  ...(isProduction(env) ? {} : { [oauth.allowInsecureRequests]: true }),
  signal: AbortSignal.timeout(10_000),
});

/** Refuses an endpoint the outbound-address guard refuses (throws with the reason). */
export function guard(env: Env, what: string, url: string | undefined): void {
  if (url === undefined) throw new Error(`the issuer names no ${what}`);
  const check = checkUpstreamUrl(url, { production: isProduction(env) });
  if (!check.ok) throw new Error(`${what} ${check.reason}`);
}

export async function discoverIssuer(env: Env, issuer: string, now = Date.now()): Promise<oauth.AuthorizationServer> {
  const known = metadata.get(issuer);
  if (known && known.until > now) return known.as;
  guard(env, "issuer", issuer);
  const url = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, httpOptions(env)));
  guard(env, "authorization_endpoint", as.authorization_endpoint);
  guard(env, "token_endpoint", as.token_endpoint);
  guard(env, "jwks_uri", as.jwks_uri);
  if (metadata.size >= MAX_ISSUERS) metadata.clear();
  metadata.set(issuer, { as, until: now + METADATA_TTL_MS });
  return as;
}

/**
 * OAuth 2.0 authorization server of the MCP server (spec 4.4): discovery (RFC 8414, RFC 9728),
 * dynamic client registration (RFC 7591), authorization code + PKCE S256 (RFC 6749, RFC 7636),
 * refresh with rotation, client credentials, revocation (RFC 7009).
 *
 * Grants act as one gateway key, chosen by a signed-in dashboard user on the consent page
 * (authorization code) or bound at registration (client credentials).
 */
import { Hono, type Context } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../app-types";
import type { Env } from "../env";
import { presentedKey } from "../auth/gateway-key";
import { createSession, destroySession, readSession, type SessionInfo } from "../auth/session";
import { assertSameOrigin } from "../auth/csrf";
import { getDb } from "../db/client";
import { switchableMemberships } from "../organizations/memberships";
import { switchableBy } from "../auth/sso-policy";
import { signInWithPassword, type SignedIn } from "../auth/sign-in";
import { ApiError } from "../errors/api-error";
import { timingSafeEqual } from "../lib/crypto";
import { isRecord } from "../providers/json";
import { authenticateClient, findClient, registerClient, type ClientRow } from "./clients";
import { OAuthError, oauthErrorResponse } from "./errors";
import { isKeyLive, selectableKeys } from "./keys";
import { authorizationServerMetadata, DEFAULT_SCOPE, grantedScope, issuerOrigin, protectedResourceMetadata, SCOPES_SUPPORTED } from "./metadata";
import { consentPage, errorPage, signInPage, type AuthorizeParams } from "./pages";
import { CHALLENGE_RE, verifyPkce } from "./pkce";
import { consumeGrant, createAuthorizationCode, issueTokens, peekGrant, revokeToken } from "./tokens";

export const oauthRoutes = new Hono<AppEnv>();

const origin = (c: Context<AppEnv>): string => issuerOrigin(c.env, c.req.raw);
const noStore = { "cache-control": "no-store", pragma: "no-cache" };

/** Browser-based MCP clients call discovery, registration, token and revocation cross-origin. */
const publicCors = cors({ origin: "*", allowMethods: ["GET", "POST", "OPTIONS"], allowHeaders: ["authorization", "content-type", "mcp-protocol-version"], maxAge: 86400 });
for (const path of ["/.well-known/*", "/oauth/register", "/oauth/token", "/oauth/revoke"]) oauthRoutes.use(path, publicCors);

// ---------- discovery ----------

// The issuer is the origin without a path, so its metadata lives only at the root well-known URL:
// a path-suffixed copy (`.../oauth-authorization-server/mcp`) would have to name the issuer
// `<origin>/mcp` (RFC 8414 3.3), which is not this server's issuer. Clients find the root one
// through the protected resource metadata's `authorization_servers`.
oauthRoutes.get("/.well-known/oauth-authorization-server", (c) => c.json(authorizationServerMetadata(origin(c))));
oauthRoutes.get("/.well-known/oauth-protected-resource", (c) => c.json(protectedResourceMetadata(origin(c))));
oauthRoutes.get("/.well-known/oauth-protected-resource/mcp", (c) => c.json(protectedResourceMetadata(origin(c))));

// ---------- form bodies ----------

/** Form (RFC 6749) or, leniently, JSON body as a flat string map; repeated fields are rejected. */
async function readForm(c: Context<AppEnv>): Promise<Record<string, string>> {
  const type = c.req.header("content-type") ?? "";
  const out: Record<string, string> = {};
  if (/^application\/json\b/i.test(type)) {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new OAuthError(400, "invalid_request", "The body is not valid JSON.");
    }
    if (!isRecord(body)) throw new OAuthError(400, "invalid_request", "The body must be an object.");
    for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
    return out;
  }
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError(400, "invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const params = new URLSearchParams(new TextDecoder().decode(await c.req.arrayBuffer()));
  for (const [k, v] of params) {
    // Own keys only: `constructor` or `__proto__` is an unrecognized parameter (ignored), not a repeat.
    if (Object.hasOwn(out, k)) throw new OAuthError(400, "invalid_request", `Parameter '${k}' is repeated.`);
    out[k] = v;
  }
  return out;
}

const handleOAuth = async (c: Context<AppEnv>, fn: () => Promise<Response>): Promise<Response> => {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorResponse(c, err);
    throw err;
  }
};

// ---------- registration (RFC 7591) ----------

oauthRoutes.post("/oauth/register", (c) =>
  handleOAuth(c, async () => {
    let metadata: unknown;
    try {
      metadata = await c.req.json();
    } catch {
      throw new OAuthError(400, "invalid_client_metadata", "The body must be JSON client metadata.");
    }
    const result = await registerClient(c.env, metadata, presentedKey(c.req.raw.headers));
    return c.json(result, 201, noStore);
  }),
);

// ---------- authorization endpoint ----------

type AuthorizeCheck =
  | { ok: true; params: AuthorizeParams; client: ClientRow }
  /** Client or redirect URI unusable: must NOT redirect (RFC 6749 4.1.2.1). */
  | { ok: false; page: string }
  /** Redirect the error back to the client. */
  | { ok: false; redirect: string };

function errorRedirect(redirectUri: string, error: string, description: string, state: string | undefined, issuer: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set("error", error);
  url.searchParams.set("error_description", description);
  if (state !== undefined) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return url.toString();
}

async function checkAuthorizeRequest(env: Env, q: Record<string, string | undefined>, issuer: string): Promise<AuthorizeCheck> {
  const clientId = q.client_id;
  if (!clientId) return { ok: false, page: "The request has no client_id." };
  const client = await findClient(env, clientId);
  if (!client) return { ok: false, page: "Unknown client. The application must register first." };
  let redirectUri = q.redirect_uri;
  if (redirectUri === undefined) {
    if (client.redirectUris.length !== 1) return { ok: false, page: "The request has no redirect_uri." };
    redirectUri = client.redirectUris[0]!;
  }
  if (!client.redirectUris.includes(redirectUri)) {
    return { ok: false, page: "The redirect_uri does not match any URI registered by this client." };
  }
  const state = q.state;
  const fail = (error: string, description: string): AuthorizeCheck => ({ ok: false, redirect: errorRedirect(redirectUri, error, description, state, issuer) });
  if (!client.grantTypes.includes("authorization_code")) return fail("unauthorized_client", "This client is not registered for the authorization_code grant.");
  if (q.response_type !== "code") return fail("unsupported_response_type", "response_type must be 'code'.");
  if (!q.code_challenge) return fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.");
  if ((q.code_challenge_method ?? "plain") !== "S256") return fail("invalid_request", "code_challenge_method must be S256.");
  if (!CHALLENGE_RE.test(q.code_challenge)) return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters).");
  if (q.scope !== undefined && q.scope.length > 500) return fail("invalid_scope", "scope is too long.");
  const scope = grantedScope(q.scope);
  if (scope === null) return fail("invalid_scope", `Supported scopes: ${SCOPES_SUPPORTED.join(" ")}.`);
  const params: AuthorizeParams = {
    response_type: "code",
    client_id: client.id,
    redirect_uri: redirectUri,
    code_challenge: q.code_challenge,
    code_challenge_method: "S256",
  };
  if (state !== undefined) params.state = state;
  params.scope = scope;
  return { ok: true, params, client };
}

function pageHeaders(c: Context<AppEnv>): void {
  c.header("cache-control", "no-store");
  c.header("x-frame-options", "DENY");
  c.header("content-security-policy", "default-src 'none'; style-src 'self'; form-action 'self' https: http://localhost:* http://127.0.0.1:*; frame-ancestors 'none'");
  c.header("referrer-policy", "no-referrer");
}

function authorizeQuery(p: AuthorizeParams): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (typeof v === "string") q.set(k, v);
  return q.toString();
}

oauthRoutes.get("/oauth/authorize", async (c) => {
  pageHeaders(c);
  const check = await checkAuthorizeRequest(c.env, c.req.query(), origin(c));
  if (!check.ok) return "page" in check ? c.html(errorPage(check.page), 400) : c.redirect(check.redirect, 302);
  const session = await readSession(c.env, c.req.header("cookie"));
  if (!session) return c.html(signInPage(check.params, check.client.name));
  return c.html(await consent(c.env, check.params, check.client.name, session));
});

/** The consent page for the session's organization, with a picker when the user has several. */
async function consent(env: Env, params: AuthorizeParams, clientName: string, session: SessionInfo) {
  const [keys, memberships] = await Promise.all([selectableKeys(env, session), switchableMemberships(getDb(env.DB), session.userId).then((m) => switchableBy(env, session, m))]);
  const orgs = memberships.map((m) => ({ id: m.organizationId, name: m.organizationName }));
  return consentPage(params, clientName, session, keys, session.csrfToken, orgs);
}

/** Login CSRF: the sign-in form only accepts same-site posts, like the dashboard's sign-in. */
function crossSite(c: Context<AppEnv>): boolean {
  try {
    assertSameOrigin(c);
    return false;
  } catch {
    return true;
  }
}

oauthRoutes.post("/oauth/authorize", async (c) => {
  pageHeaders(c);
  let form: Record<string, string>;
  try {
    form = await readForm(c);
  } catch {
    return c.html(errorPage("The form could not be read."), 400);
  }
  const issuer = origin(c);
  const check = await checkAuthorizeRequest(c.env, form, issuer);
  if (!check.ok) return "page" in check ? c.html(errorPage(check.page), 400) : c.redirect(check.redirect, 302);
  const { params, client } = check;

  if (form.action === "sign_in") {
    if (crossSite(c)) return c.html(errorPage("Cross-site sign-in refused. Open the sign-in page of this server and sign in there."), 403);
    let signedIn: SignedIn;
    try {
      signedIn = await signInWithPassword(c.env, c.req.raw.headers, { email: form.email ?? "", password: form.password ?? "" });
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 401 && err.status !== 429)) throw err;
      const message = err.status === 429 ? "Too many sign-in attempts. Try again later." : "Invalid e-mail or password.";
      return c.html(signInPage(params, client.name, message), err.status);
    }
    const session = await createSession(c.env, { userId: signedIn.user.id, organizationId: signedIn.membership.organizationId, memberId: signedIn.membership.memberId });
    c.header("set-cookie", session.cookie);
    return c.redirect(`/oauth/authorize?${authorizeQuery(params)}`, 303);
  }

  const session = await readSession(c.env, c.req.header("cookie"));
  if (!session) return c.html(signInPage(params, client.name, "Your session has ended; sign in again."), 401);
  if (!form.csrf_token || !timingSafeEqual(form.csrf_token, session.csrfToken)) {
    return c.html(errorPage("The form has expired or did not come from this page (CSRF check failed). Reload and try again."), 403);
  }
  if (form.action === "switch_org") {
    const target = (await switchableBy(c.env, session, await switchableMemberships(getDb(c.env.DB), session.userId))).find((m) => m.organizationId === form.organization_id);
    if (!target) return c.html(await consent(c.env, params, client.name, session), 400);
    await destroySession(c.env, c.req.header("cookie"));
    const next = await createSession(c.env, { userId: session.userId, organizationId: target.organizationId, memberId: target.memberId, signInMethod: session.signInMethod });
    c.header("set-cookie", next.cookie);
    return c.redirect(`/oauth/authorize?${authorizeQuery(params)}`, 303);
  }
  if (form.action === "deny") {
    return c.redirect(errorRedirect(params.redirect_uri, "access_denied", "The user denied the request.", params.state, issuer), 302);
  }
  if (form.action !== "approve") return c.html(errorPage("Unknown action."), 400);
  const keys = await selectableKeys(c.env, session);
  const key = keys.find((k) => k.id === form.key_id);
  if (!key) return c.html(await consent(c.env, params, client.name, session), 400);
  const code = await createAuthorizationCode(c.env, {
    clientId: client.id,
    apiKeyId: key.id,
    scope: params.scope ?? DEFAULT_SCOPE,
    redirectUri: params.redirect_uri,
    codeChallenge: params.code_challenge,
  });
  const target = new URL(params.redirect_uri);
  target.searchParams.set("code", code);
  if (params.state !== undefined) target.searchParams.set("state", params.state);
  target.searchParams.set("iss", issuer);
  return c.redirect(target.toString(), 302);
});

// ---------- token endpoint ----------

oauthRoutes.post("/oauth/token", (c) =>
  handleOAuth(c, async () => {
    const form = await readForm(c);
    const grantType = form.grant_type;
    if (!grantType) throw new OAuthError(400, "invalid_request", "grant_type is required.");
    if (!["authorization_code", "refresh_token", "client_credentials"].includes(grantType)) {
      throw new OAuthError(400, "unsupported_grant_type", `Unsupported grant_type '${grantType.slice(0, 50)}'.`);
    }
    const client = await authenticateClient(c.env, c.req.header("authorization"), form);
    if (!client.grantTypes.includes(grantType)) throw new OAuthError(400, "unauthorized_client", `This client is not registered for the ${grantType} grant.`);

    if (grantType === "authorization_code") {
      const { code, code_verifier: verifier, redirect_uri: redirectUri } = form;
      if (!code || !verifier) throw new OAuthError(400, "invalid_request", "code and code_verifier are required.");
      // Every check on the live code first; only then is it used up (RFC 6749 4.1.3, 10.5).
      const live = await peekGrant(c.env, "code", code);
      if (live) {
        if (live.clientId !== client.id) throw new OAuthError(400, "invalid_grant", "The authorization code was issued to another client.");
        if (redirectUri !== undefined && redirectUri !== live.redirectUri) throw new OAuthError(400, "invalid_grant", "redirect_uri does not match the authorization request.");
        if (!live.codeChallenge || !(await verifyPkce(verifier, live.codeChallenge))) throw new OAuthError(400, "invalid_grant", "PKCE verification failed (code_verifier).");
      }
      const consumed = await consumeGrant(c.env, "code", code, client.id);
      if (!consumed.ok) throw new OAuthError(400, "invalid_grant", consumed.replayed ? "The authorization code was already used; its tokens are revoked." : "The authorization code is invalid or expired.");
      const grant = consumed.grant;
      if (!live || grant.clientId !== client.id) throw new OAuthError(400, "invalid_grant", "The authorization code is invalid or expired.");
      if (!(await isKeyLive(c.env, grant.apiKeyId))) throw new OAuthError(400, "invalid_grant", "The API key of this grant is no longer active.");
      const tokens = await issueTokens(c.env, { clientId: client.id, apiKeyId: grant.apiKeyId, scope: grant.scope, family: consumed.family, refresh: client.grantTypes.includes("refresh_token") });
      return c.json(tokens, 200, noStore);
    }

    if (grantType === "refresh_token") {
      if (!form.refresh_token) throw new OAuthError(400, "invalid_request", "refresh_token is required.");
      const live = await peekGrant(c.env, "refresh", form.refresh_token);
      if (live && live.clientId !== client.id) throw new OAuthError(400, "invalid_grant", "The refresh token was issued to another client.");
      const consumed = await consumeGrant(c.env, "refresh", form.refresh_token, client.id);
      if (!consumed.ok) throw new OAuthError(400, "invalid_grant", consumed.replayed ? "The refresh token was already used; the grant is revoked." : "The refresh token is invalid, expired or revoked.");
      const grant = consumed.grant;
      if (grant.clientId !== client.id) throw new OAuthError(400, "invalid_grant", "The refresh token was issued to another client.");
      if (!(await isKeyLive(c.env, grant.apiKeyId))) throw new OAuthError(400, "invalid_grant", "The API key of this grant is no longer active.");
      const tokens = await issueTokens(c.env, { clientId: client.id, apiKeyId: grant.apiKeyId, scope: grant.scope, family: consumed.family, refresh: true });
      return c.json(tokens, 200, noStore);
    }

    // client_credentials
    if (!client.secretHash) throw new OAuthError(400, "unauthorized_client", "Public clients cannot use client_credentials.");
    if (!client.apiKeyId || !(await isKeyLive(c.env, client.apiKeyId))) {
      throw new OAuthError(400, "invalid_grant", "The API key this client is bound to is no longer active.");
    }
    const scope = grantedScope(form.scope?.slice(0, 500));
    if (scope === null) throw new OAuthError(400, "invalid_scope", `Supported scopes: ${SCOPES_SUPPORTED.join(" ")}.`);
    const tokens = await issueTokens(c.env, { clientId: client.id, apiKeyId: client.apiKeyId, scope, refresh: false });
    return c.json(tokens, 200, noStore);
  }),
);

// ---------- revocation (RFC 7009) ----------

oauthRoutes.post("/oauth/revoke", (c) =>
  handleOAuth(c, async () => {
    const form = await readForm(c);
    if (!form.token) throw new OAuthError(400, "invalid_request", "token is required.");
    const client = await authenticateClient(c.env, c.req.header("authorization"), form);
    await revokeToken(c.env, client.id, form.token);
    return c.body(null, 200, noStore);
  }),
);

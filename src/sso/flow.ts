/**
 * OpenID Connect sign-in, authorization code flow with PKCE (oauth4webapi):
 *
 * - `startSignIn`: a fresh `state`, `nonce` and PKCE verifier, sealed (AES-GCM under
 *   KEY_HASH_SECRET) into the short-lived `swb_sso` cookie of this browser, so any isolate can finish
 *   the sign-in and nothing is kept per process; the browser goes to the provider.
 * - `finishSignIn`: the callback's `state` must equal the cookie's; the code is exchanged with the
 *   verifier and the client secret; the ID token's claims are validated (iss, aud, azp, exp, iat,
 *   nonce) and its signature verified against the issuer's JWKS (TLS alone would do for a token
 *   from the token endpoint, but a verified signature also catches a compromised or misrouted
 *   endpoint). Then `email_verified` must be true and the e-mail's domain allowed (the e-mail
 *   from the ID token, else from UserInfo for the same `sub`).
 * - Just-in-time membership: an unknown e-mail gets an account without a password; a person who is
 *   not yet a member gets the organization's default role. The membership is not "accepted": only
 *   the e-mailed token does that, so the person's own password (from another organization) does
 *   not open it; the identity provider does, and the session it opens is good for this
 *   organization only (`sessions.sign_in_method = 'sso'`).
 */
import { and, eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { members, users } from "../db/schema";
import { decryptSecret, encryptSecret, requireHashSecret } from "../lib/crypto";
import { newId } from "../lib/ids";
import { recordAuditEntry } from "../audit/store";
import { createSession, type NewSession } from "../auth/session";
import { readSsoConfig, ssoRedirectUri, type SsoRow } from "./config";
import { discoverIssuer, guard, httpOptions } from "./issuer";

export const SSO_COOKIE = "swb_sso";
const SSO_COOKIE_PATH = "/dashboard/sso";
/** How long the person has at the provider before the callback is refused. */
export const SSO_ATTEMPT_TTL_MS = 10 * 60_000;

/** A refusal shown on the callback page: `message` is for the person, never secret. */
export class SsoError extends Error {
  constructor(
    readonly status: 400 | 403,
    message: string,
  ) {
    super(message);
  }
}

interface Attempt {
  organizationId: string;
  state: string;
  nonce: string;
  verifier: string;
  expiresAt: number;
}

const attemptCookie = (value: string, maxAge: number): string => `${SSO_COOKIE}=${value}; Path=${SSO_COOKIE_PATH}; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAge}`;
export const clearedAttemptCookie = (): string => attemptCookie("", 0);

function cookieValue(header: string | undefined): string | null {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === SSO_COOKIE) return part.slice(at + 1).trim();
  }
  return null;
}

const client = (row: SsoRow): oauth.Client => ({ client_id: row.clientId });

/** The provider's authorization URL for `row`'s organization, and the cookie that binds it to this browser. */
export async function startSignIn(env: Env, row: SsoRow, origin: string, loginHint: string | null, now = Date.now()): Promise<{ location: string; cookie: string }> {
  const as = await discoverIssuer(env, row.issuer);
  const verifier = oauth.generateRandomCodeVerifier();
  const attempt: Attempt = { organizationId: row.organizationId, state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), verifier, expiresAt: now + SSO_ATTEMPT_TTL_MS };
  const url = new URL(as.authorization_endpoint ?? "");
  url.searchParams.set("client_id", row.clientId);
  url.searchParams.set("redirect_uri", ssoRedirectUri(origin));
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", "openid email profile");
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", attempt.state);
  url.searchParams.set("nonce", attempt.nonce);
  if (loginHint) url.searchParams.set("login_hint", loginHint);
  const sealed = await encryptSecret(requireHashSecret(env), JSON.stringify(attempt));
  // base64 of the sealed value: `v1.<iv>.<ct>` holds `+`, `/` and `=`, not all safe in a cookie.
  return { location: url.href, cookie: attemptCookie(encodeURIComponent(sealed), Math.floor(SSO_ATTEMPT_TTL_MS / 1000)) };
}

async function readAttempt(env: Env, cookieHeader: string | undefined, now: number): Promise<Attempt> {
  const raw = cookieValue(cookieHeader);
  const expired = new SsoError(400, "This sign-in did not start in this browser or took longer than 10 minutes. Start again from the sign-in page.");
  if (!raw) throw expired;
  let attempt: Attempt;
  try {
    attempt = JSON.parse(await decryptSecret(requireHashSecret(env), decodeURIComponent(raw))) as Attempt;
  } catch {
    throw expired;
  }
  if (typeof attempt.expiresAt !== "number" || attempt.expiresAt < now) throw expired;
  return attempt;
}

/** Why oauth4webapi refused, in words a person can act on (the detail goes to the log, never a token). */
function refusal(err: unknown): SsoError {
  const code = err instanceof oauth.OperationProcessingError || err instanceof oauth.ResponseBodyError || err instanceof oauth.AuthorizationResponseError ? err.code : "unknown";
  const detail = err instanceof Error ? err.message : String(err);
  console.warn("sso sign-in refused", code, detail.slice(0, 300));
  if (err instanceof oauth.AuthorizationResponseError) return new SsoError(403, `The identity provider refused the sign-in (${err.error}).`);
  return new SsoError(403, `The identity provider's answer could not be verified (${detail.slice(0, 160)}). Nobody was signed in.`);
}

export interface SsoSignedIn {
  session: NewSession;
  organizationId: string;
  memberId: string;
}

/** Checks the callback and opens a session (see the module comment for every check). */
export async function finishSignIn(env: Env, callbackUrl: URL, cookieHeader: string | undefined, origin: string, ip: string | null, now = Date.now()): Promise<SsoSignedIn> {
  const attempt = await readAttempt(env, cookieHeader, now);
  const row = await readSsoConfig(env, attempt.organizationId);
  if (!row) throw new SsoError(400, "Single sign-on is no longer configured for this organization.");
  let claims: oauth.IDToken;
  try {
    const as = await discoverIssuer(env, row.issuer);
    const params = oauth.validateAuthResponse(as, client(row), callbackUrl.searchParams, attempt.state);
    const secret = await decryptSecret(requireHashSecret(env), row.clientSecretEncrypted);
    const auth = as.token_endpoint_auth_methods_supported?.includes("client_secret_basic") === false ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret);
    const response = await oauth.authorizationCodeGrantRequest(as, client(row), auth, params, ssoRedirectUri(origin), attempt.verifier, httpOptions(env));
    const result = await oauth.processAuthorizationCodeResponse(as, client(row), response, { expectedNonce: attempt.nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(as, response, httpOptions(env));
    const validated = oauth.getValidatedIdTokenClaims(result);
    if (!validated) throw new Error("no ID token");
    claims = validated;
    // A conforming provider may keep scope claims out of the ID token when it issues an access
    // token (Okta and oidc-provider do): then they come from UserInfo, whose `sub` must match.
    if (typeof claims.email !== "string" && as.userinfo_endpoint) {
      guard(env, "userinfo_endpoint", as.userinfo_endpoint);
      const info = await oauth.processUserInfoResponse(as, client(row), claims.sub, await oauth.userInfoRequest(as, client(row), result.access_token, httpOptions(env)));
      claims = { ...claims, email: info.email, email_verified: info.email_verified, name: claims.name ?? info.name };
    }
  } catch (err) {
    throw err instanceof SsoError ? err : refusal(err);
  }
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email) throw new SsoError(403, "The identity provider did not share an e-mail address (the `email` scope).");
  if (claims.email_verified !== true) throw new SsoError(403, `The identity provider has not verified the e-mail address ${email}.`);
  const domain = email.split("@").at(-1) ?? "";
  if (!row.allowedDomains.includes(domain)) throw new SsoError(403, `E-mail addresses at ${domain} may not sign in to this organization with SSO.`);
  const name = typeof claims.name === "string" && claims.name.trim() ? claims.name.trim().slice(0, 200) : email;
  const { userId, memberId } = await justInTimeMember(env, row, email, name, ip, now);
  const session = await createSession(env, { userId, organizationId: row.organizationId, memberId, signInMethod: "sso" }, now);
  return { session, organizationId: row.organizationId, memberId };
}

/** The account and membership for a verified e-mail, created on first sign-in. */
async function justInTimeMember(env: Env, row: SsoRow, email: string, name: string, ip: string | null, now: number): Promise<{ userId: string; memberId: string }> {
  const db = getDb(env.DB);
  await db.insert(users).values({ id: newId("user"), email, name, passwordHash: null, passwordOrgId: null }).onConflictDoNothing();
  const user = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
  if (!user) throw new Error("user insert returned no row");
  const found = await db.select({ id: members.id }).from(members).where(and(eq(members.organizationId, row.organizationId), eq(members.userId, user.id))).get();
  if (found) return { userId: user.id, memberId: found.id };
  const memberId = newId("mem");
  await db.insert(members).values({ id: memberId, organizationId: row.organizationId, userId: user.id, role: row.defaultRole, createdAt: now }).onConflictDoNothing();
  const member = await db.select({ id: members.id }).from(members).where(and(eq(members.organizationId, row.organizationId), eq(members.userId, user.id))).get();
  if (!member) throw new Error("member insert returned no row");
  if (member.id === memberId) {
    await recordAuditEntry(env, {
      organizationId: row.organizationId,
      actor: { type: "member", id: memberId, email },
      action: "member.create",
      target: { type: "member", id: memberId },
      after: { email, role: row.defaultRole, via: "sso" },
      ip,
    }).catch((err: unknown) => console.error("audit entry not written", "member.create", err instanceof Error ? err.message : String(err)));
  }
  return { userId: user.id, memberId: member.id };
}

/**
 * Password sign-in shared by the dashboard (`POST /api/auth/sign-in`) and the OAuth sign-in form.
 *
 * - Which memberships a password opens: src/organizations/memberships.ts (a pending membership of
 *   an existing account opens nothing; the answer is the same as for a wrong password).
 * - Brute force: per client IP (contract section 6) a coarse window of attempts, and per client IP +
 *   account an exponential backoff after a few failures. Nothing is counted per account alone, so
 *   a stranger guessing from elsewhere cannot lock the owner out (docs/security.md).
 */
import { eq } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { users } from "../db/schema";
import { ApiError, unauthorized } from "../errors/api-error";
import { verifyPassword } from "./password";
import { backoffUntil, rateLimit, recordFailure, resetLimits } from "../durable-objects/rate-limiter";
import { clientIpOf } from "../iam/cidr";
import { signInMemberships } from "../organizations/memberships";
import { passwordAllowed } from "./sso-policy";

export const ATTEMPTS_PER_IP = 50;
export const IP_WINDOW_MS = 15 * 60_000;
/** Failures per client IP + account before backoff starts; then 30 s, 60 s, ... up to 15 min. */
export const FREE_FAILURES = 5;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 15 * 60_000;

/** A password hash to verify against when the user does not exist, so timing does not reveal it. */
const DUMMY_HASH = `pbkdf2-sha256$100000$${btoa("switchboard-salt")}$${btoa("x".repeat(32))}`;

const tooMany = (until: number): ApiError =>
  new ApiError(429, "Too many sign-in attempts; try again later.", {
    type: "rate_limit_error",
    code: "rate_limit_exceeded",
    headers: { "retry-after": String(Math.max(1, Math.ceil((until - Date.now()) / 1000))) },
  });

/**
 * The public SSO routes, limited per client IP with the password sign-in's window and number of
 * attempts, each with a counter of its own (so no door spends another's):
 * - `GET /dashboard/sso/start` looks the e-mail's domain up and may run discovery against an
 *   organization's identity provider;
 * - `GET /dashboard/sso/callback` decrypts the attempt cookie and may call the provider's token
 *   endpoint and read its keys.
 * Without a client IP (never on Cloudflare) nothing is counted, as for password sign-in's per-IP window.
 */
export async function countSsoRequest(env: Env, headers: Headers, route: "start" | "callback"): Promise<void> {
  const ip = clientIpOf(headers);
  if (!ip) return;
  const perIp = await rateLimit(env, `sso-${route}:ip:${ip}`, ATTEMPTS_PER_IP, IP_WINDOW_MS);
  if (!perIp.allowed) throw tooMany(perIp.resetAt);
}

const invalid = (): ApiError => unauthorized("Invalid e-mail or password.", "invalid_credentials");

export interface SignedIn {
  user: { id: string; email: string; name: string };
  membership: { memberId: string; role: "owner" | "admin" | "developer"; organizationId: string; organizationName: string };
}

/**
 * Checks e-mail + password (+ optional organization) and returns the membership to open a session
 * for. Throws 401 `invalid_credentials` (wrong password, unknown user, no usable membership: one
 * answer) or 429 with `retry-after`.
 */
export async function signInWithPassword(env: Env, headers: Headers, input: { email: string; password: string; organizationId?: string }): Promise<SignedIn> {
  const email = input.email.trim().toLowerCase();
  const ip = clientIpOf(headers);
  const pairKey = `signin:ip-account:${ip ?? "undetermined"}:${email}`;
  // Without a client IP (never on Cloudflare, which always sets CF-Connecting-IP) only the pair counts.
  const [perIp, until] = await Promise.all([ip ? rateLimit(env, `signin:ip:${ip}`, ATTEMPTS_PER_IP, IP_WINDOW_MS) : null, backoffUntil(env, pairKey)]);
  if (until > 0) throw tooMany(until);
  if (perIp && !perIp.allowed) throw tooMany(perIp.resetAt);

  const db = getDb(env.DB);
  const user = await db.select().from(users).where(eq(users.email, email)).get();
  const valid = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_HASH);
  // The membership lookup runs whatever the password check said, so timing tells nothing either.
  const usable = user ? await signInMemberships(db, user, input.organizationId) : [];
  const candidates = valid ? usable : [];
  if (!user || !valid || candidates.length === 0) {
    await recordFailure(env, pairKey, FREE_FAILURES, BACKOFF_BASE_MS, BACKOFF_MAX_MS);
    throw invalid();
  }
  // Past the password: an organization that requires SSO opens only to its identity provider
  // (and to its one break-glass owner). The refusal names the way in, the password was right.
  const allowed = await Promise.all(candidates.map((m) => passwordAllowed(env, m.organizationId, m.memberId)));
  const membership = candidates.find((_, i) => allowed[i]);
  if (!membership) {
    await resetLimits(env, pairKey);
    throw new ApiError(403, "This organization requires single sign-on: use \"Sign in with SSO\" with your work e-mail.", { type: "permission_error", code: "sso_required" });
  }
  // Signing in never accepts a membership: only the e-mailed token does.
  await resetLimits(env, pairKey);
  return {
    user: { id: user.id, email: user.email, name: user.name },
    membership: { memberId: membership.memberId, role: membership.role, organizationId: membership.organizationId, organizationName: membership.organizationName },
  };
}

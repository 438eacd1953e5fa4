/**
 * Dashboard sessions (contract section 5). The cookie `swb_session` holds a random token; D1 holds
 * only its keyed fingerprint (`sessions.token_hash`; older rows: plain SHA-256, rewritten at their
 * next use, src/lib/secret-hash.ts). Each session also carries a CSRF token, returned at
 * sign-in, that state-changing `/api` requests must echo in `x-csrf-token` (src/auth/csrf.ts).
 */
import { and, eq, gt, inArray } from "drizzle-orm";
import type { Env } from "../env";
import type { Role } from "../db/schema";
import { getDb } from "../db/client";
import { members, sessions, users } from "../db/schema";
import { candidates, secretHashes } from "../lib/secret-hash";
import { requireHashSecret } from "./gateway-key";
import { newId, randomAlphanumeric } from "../lib/ids";

export const SESSION_COOKIE = "swb_session";
/** Sessions last 7 days. */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;
const TOKEN_LENGTH = 48;

export interface SessionInfo {
  sessionId: string;
  userId: string;
  organizationId: string;
  memberId: string;
  role: Role;
  email: string;
  name: string;
  csrfToken: string;
  /** `sso` sessions open only the organization whose identity provider signed the person in. */
  signInMethod: "password" | "sso";
}

export interface NewSession {
  /** Raw cookie value (shown only in Set-Cookie). */
  token: string;
  csrfToken: string;
  /** Complete `Set-Cookie` header value. */
  cookie: string;
  sessionId: string;
  expiresAt: number;
}

/** The `Set-Cookie` value for a session token (HttpOnly, Secure, SameSite=Lax, Path=/). */
export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

/** `Set-Cookie` value that removes the session cookie. */
export const clearedSessionCookie = (): string => sessionCookie("", 0);

/** Extracts `swb_session` from a Cookie header. */
export function sessionTokenFromCookie(cookieHeader: string | undefined | null): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(";")) {
    const eqAt = part.indexOf("=");
    if (eqAt < 0) continue;
    if (part.slice(0, eqAt).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eqAt + 1).trim();
    return /^[A-Za-z0-9]{16,128}$/.test(value) ? value : null;
  }
  return null;
}

export async function createSession(
  env: Env,
  input: { userId: string; organizationId: string; memberId: string; signInMethod?: "password" | "sso" },
  now = Date.now(),
): Promise<NewSession> {
  const token = randomAlphanumeric(TOKEN_LENGTH);
  const csrfToken = randomAlphanumeric(32);
  const sessionId = newId("sess");
  const expiresAt = now + SESSION_TTL_MS;
  await getDb(env.DB)
    .insert(sessions)
    .values({ id: sessionId, tokenHash: (await secretHashes(requireHashSecret(env), token)).keyed, userId: input.userId, organizationId: input.organizationId, memberId: input.memberId, csrfToken, expiresAt, createdAt: now, signInMethod: input.signInMethod ?? "password" });
  return { token, csrfToken, cookie: sessionCookie(token, Math.floor(SESSION_TTL_MS / 1000)), sessionId, expiresAt };
}

/** The session behind a Cookie header, or null (no cookie, unknown, expired, or membership gone). */
export async function readSession(env: Env, cookieHeader: string | undefined, now = Date.now()): Promise<SessionInfo | null> {
  const token = sessionTokenFromCookie(cookieHeader);
  if (!token) return null;
  const hashes = await secretHashes(requireHashSecret(env), token);
  const db = getDb(env.DB);
  const row = await db
    .select({
      sessionId: sessions.id,
      tokenHash: sessions.tokenHash,
      userId: sessions.userId,
      organizationId: sessions.organizationId,
      memberId: sessions.memberId,
      csrfToken: sessions.csrfToken,
      signInMethod: sessions.signInMethod,
      role: members.role,
      email: users.email,
      name: users.name,
    })
    .from(sessions)
    .innerJoin(members, and(eq(members.id, sessions.memberId), eq(members.organizationId, sessions.organizationId)))
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(inArray(sessions.tokenHash, candidates(hashes)), gt(sessions.expiresAt, now)))
    .get();
  if (!row) return null;
  // A session from before keyed fingerprints: stored the keyed way from now on.
  if (row.tokenHash !== hashes.keyed) await db.update(sessions).set({ tokenHash: hashes.keyed }).where(and(eq(sessions.id, row.sessionId), eq(sessions.tokenHash, hashes.legacy)));
  const { tokenHash: _stored, ...info } = row;
  return info;
}

/** Deletes the session behind a Cookie header (sign-out). Idempotent. */
export async function destroySession(env: Env, cookieHeader: string | undefined): Promise<void> {
  const token = sessionTokenFromCookie(cookieHeader);
  if (!token) return;
  await getDb(env.DB).delete(sessions).where(inArray(sessions.tokenHash, candidates(await secretHashes(requireHashSecret(env), token))));
}

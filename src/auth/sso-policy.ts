/**
 * What single sign-on changes for password sign-in and organization switching (src/sso/ holds the
 * rest). Here, below the routes and the OAuth pages that ask, so both read one rule.
 */
import { eq } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { organizationSso } from "../db/schema";

/**
 * Whether a password may open `memberId`'s membership of `organizationId`: not when the
 * organization requires SSO, unless the member is its break-glass owner.
 */
export async function passwordAllowed(env: Env, organizationId: string, memberId: string): Promise<boolean> {
  const row = await getDb(env.DB)
    .select({ required: organizationSso.required, breakGlass: organizationSso.breakGlassMemberId })
    .from(organizationSso)
    .where(eq(organizationSso.organizationId, organizationId))
    .get();
  return !row?.required || row.breakGlass === memberId;
}

/**
 * Which of a user's memberships a session may switch to without signing in again: an SSO session
 * only its own organization (another organization never trusted that identity provider), a
 * password session only those whose organization does not require SSO of that member.
 */
export async function switchableBy<M extends { organizationId: string; memberId: string }>(
  env: Env,
  session: { signInMethod: "password" | "sso"; organizationId: string },
  memberships: M[],
): Promise<M[]> {
  if (session.signInMethod === "sso") return memberships.filter((m) => m.organizationId === session.organizationId);
  const allowed = await Promise.all(memberships.map((m) => m.organizationId === session.organizationId || passwordAllowed(env, m.organizationId, m.memberId)));
  return memberships.filter((_, i) => allowed[i]);
}

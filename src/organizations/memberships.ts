/**
 * Members and accounts across organizations (contract section 5, docs/security.md).
 *
 * - An account (`users`) is shared by e-mail; its password belongs to the person. A password an
 *   organization sends when it adds a brand-new e-mail only opens that organization
 *   (`users.password_org_id`) until the person sets their own one at acceptance.
 * - Every membership added through the master API starts pending (`accepted_at` null) and an
 *   acceptance token is e-mailed to the address. For an existing account the membership cannot be
 *   used at all until accepted; the request is answered exactly like for a new e-mail (a password
 *   in the body is hashed and discarded so even the timing matches).
 * - Only the e-mailed token accepts a membership (`acceptInvitation`). Signing in with a password
 *   an organization chose opens that organization but accepts nothing: the organization never
 *   proved the address is the person's, so it stays pending, gets no e-mail, and the person's own
 *   password (set when accepting any invitation) does not open it.
 * - Only accepted members receive e-mail (budget alerts).
 */
import { and, asc, eq, gt, inArray, isNotNull, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import { publicOrigin } from "../env";
import { getDb, type Db } from "../db/client";
import { membershipInvitations, members, organizations, sessions, users, type Role } from "../db/schema";
import { ApiError, badRequest } from "../errors/api-error";
import { hashPassword } from "../auth/password";
import { requireHashSecret } from "../lib/crypto";
import { candidates, secretHashes } from "../lib/secret-hash";
import { newId, randomAlphanumeric } from "../lib/ids";
import { sendMail } from "../lib/mail";
import { rateLimit } from "../durable-objects/rate-limiter";

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
/** Invitation e-mails one organization may send one address per window (adding and resending). */
export const INVITATIONS_PER_WINDOW = 5;
export const INVITATION_WINDOW_MS = 3_600_000;
const TOKEN_LENGTH = 43;

export interface NewMember {
  email: string;
  name: string;
  role: Role;
  password?: string;
}

/**
 * Adds a member to `organizationId` and e-mails an acceptance token. Returns the member id.
 * 409 when the e-mail is already a member of this organization (its own data, no leak).
 */
export async function addMember(env: Env, organizationId: string, input: NewMember): Promise<string> {
  const db = getDb(env.DB);
  const email = input.email.trim().toLowerCase();
  // Removing and adding again sends mail too: the same limit as resending.
  await admitInvitationMail(env, organizationId, email);
  // Hash whenever a password is sent, so a new and an existing account take the same time.
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const created = await db
    .insert(users)
    .values({ id: newId("user"), email, name: input.name, passwordHash, passwordOrgId: passwordHash ? organizationId : null })
    .onConflictDoNothing()
    .returning({ id: users.id })
    .get();
  const user = created ?? (await db.select({ id: users.id }).from(users).where(eq(users.email, email)).get());
  if (!user) throw new Error("user insert returned no row");

  const memberId = newId("mem");
  const inserted = await db
    .insert(members)
    .values({ id: memberId, organizationId, userId: user.id, role: input.role, name: input.name, acceptedAt: null, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning({ id: members.id })
    .get();
  if (!inserted) {
    throw new ApiError(409, `'${email}' is already a member of this organization.`, { type: "invalid_request_error", code: "member_exists", param: "email" });
  }
  await mailInvitation(env, organizationId, memberId, email);
  return memberId;
}

/**
 * At most INVITATIONS_PER_WINDOW invitation e-mails from one organization to one address per
 * hour (resending had no limit); 429 `invitation_rate_limited` with `retry-after` past it.
 * Keyed by organization and address, so no organization can use up another's invitations.
 */
async function admitInvitationMail(env: Env, organizationId: string, email: string): Promise<void> {
  const r = await rateLimit(env, `invite:${organizationId}:${email}`, INVITATIONS_PER_WINDOW, INVITATION_WINDOW_MS);
  if (r.allowed) return;
  const retryAfter = Math.max(1, Math.ceil((r.resetAt - Date.now()) / 1000));
  throw new ApiError(429, `At most ${INVITATIONS_PER_WINDOW} invitation e-mails per hour to one address. Retry in ${retryAfter}s.`, {
    type: "rate_limit_error",
    code: "invitation_rate_limited",
    headers: { "retry-after": String(retryAfter) },
  });
}

/**
 * Creates a fresh one-time token for a pending membership (older ones die) and e-mails it, within
 * the invitation limit (429 past it, the previous token still working).
 */
export async function sendInvitation(env: Env, organizationId: string, memberId: string, email: string, now = Date.now()): Promise<void> {
  await admitInvitationMail(env, organizationId, email);
  await mailInvitation(env, organizationId, memberId, email, now);
}

async function mailInvitation(env: Env, organizationId: string, memberId: string, email: string, now = Date.now()): Promise<void> {
  const db = getDb(env.DB);
  const token = randomAlphanumeric(TOKEN_LENGTH);
  const expiresAt = now + INVITATION_TTL_MS;
  const { keyed } = await secretHashes(requireHashSecret(env), token);
  await db.batch([
    db.delete(membershipInvitations).where(eq(membershipInvitations.memberId, memberId)),
    db.insert(membershipInvitations).values({ id: newId("inv"), memberId, tokenHash: keyed, expiresAt, createdAt: now }),
  ]);
  const org = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId)).get();
  const base = publicOrigin(env);
  const how = base
    ? `Open ${base}/dashboard/accept#token=${token}`
    : `Open /dashboard/accept on your Switchboard gateway and enter this token: ${token}`;
  await sendMail(env, {
    to: email,
    subject: `Invitation to join ${org?.name ?? "an organization"} on Switchboard`,
    text: [
      `You were added to the organization "${org?.name ?? organizationId}" on Switchboard.`,
      "",
      `${how}`,
      "",
      `The token works once and expires on ${new Date(expiresAt).toUTCString()}.`,
      "If you did not expect this, ignore this e-mail: nothing changes until you accept.",
      "",
    ].join("\n"),
  });
}

interface InvitationRow {
  invitationId: string;
  memberId: string;
  organizationId: string;
  organizationName: string;
  role: Role;
  userId: string;
  email: string;
  passwordHash: string | null;
  passwordOrgId: string | null;
}

/**
 * The live invitation behind a token. Tokens are stored as their keyed fingerprint like every other
 * secret (src/lib/secret-hash.ts); one e-mailed before that change is still found by its plain
 * SHA-256 and rewritten to the keyed value at this first use.
 */
async function findInvitation(env: Env, db: Db, token: string, now: number): Promise<InvitationRow> {
  const hashes = /^[A-Za-z0-9]{20,128}$/.test(token) ? await secretHashes(requireHashSecret(env), token) : null;
  const row = hashes
    ? await db
        .select({
          tokenHash: membershipInvitations.tokenHash,
          invitationId: membershipInvitations.id,
          memberId: members.id,
          organizationId: organizations.id,
          organizationName: organizations.name,
          role: members.role,
          userId: users.id,
          email: users.email,
          passwordHash: users.passwordHash,
          passwordOrgId: users.passwordOrgId,
        })
        .from(membershipInvitations)
        .innerJoin(members, eq(members.id, membershipInvitations.memberId))
        .innerJoin(organizations, eq(organizations.id, members.organizationId))
        .innerJoin(users, eq(users.id, members.userId))
        .where(and(inArray(membershipInvitations.tokenHash, candidates(hashes)), gt(membershipInvitations.expiresAt, now)))
        .get()
    : undefined;
  if (!row || !hashes) throw badRequest("The invitation token is invalid, expired or already used.", "token", "invalid_invitation");
  if (row.tokenHash !== hashes.keyed) {
    await db.update(membershipInvitations).set({ tokenHash: hashes.keyed }).where(and(eq(membershipInvitations.id, row.invitationId), eq(membershipInvitations.tokenHash, hashes.legacy)));
  }
  const { tokenHash: _stored, ...invitation } = row;
  return invitation;
}

/** True when the account has no password of its own yet (none, or one an organization chose). */
const needsOwnPassword = (r: { passwordHash: string | null; passwordOrgId: string | null }): boolean => !r.passwordHash || r.passwordOrgId !== null;

/** What the acceptance page shows before the person accepts. */
export async function previewInvitation(env: Env, token: string, now = Date.now()) {
  const r = await findInvitation(env, getDb(env.DB), token, now);
  return { organization: { id: r.organizationId, name: r.organizationName }, email: r.email, role: r.role, passwordRequired: needsOwnPassword(r) };
}

/**
 * Accepts a membership with its e-mailed token (proof of owning the address). An account without a
 * password of its own must set one here (`password`, >= 12 characters); that also ends every session
 * opened with a password an organization chose. An account with its own password keeps it.
 */
export async function acceptInvitation(env: Env, token: string, password: string | undefined, now = Date.now()) {
  const db = getDb(env.DB);
  const r = await findInvitation(env, db, token, now);
  const setPassword = needsOwnPassword(r);
  if (setPassword && !password) throw badRequest("Choose a password for your account (at least 12 characters).", "password", "password_required");
  const consumed = await db.delete(membershipInvitations).where(eq(membershipInvitations.id, r.invitationId)).returning({ id: membershipInvitations.id });
  if (consumed.length === 0) throw badRequest("The invitation token is invalid, expired or already used.", "token", "invalid_invitation");
  const accept = db.update(members).set({ acceptedAt: now }).where(eq(members.id, r.memberId));
  if (setPassword && password) {
    const hash = await hashPassword(password);
    await db.batch([
      accept,
      db.update(users).set({ passwordHash: hash, passwordOrgId: null }).where(eq(users.id, r.userId)),
      db.delete(sessions).where(eq(sessions.userId, r.userId)),
    ]);
  } else {
    await accept;
  }
  return { organization: { id: r.organizationId, name: r.organizationName }, member: { id: r.memberId, role: r.role }, email: r.email };
}

/**
 * The memberships a password opens: an organization-chosen password opens only that organization
 * (its membership stays pending: signing in accepts nothing), the account's own password only
 * accepted memberships. Oldest first.
 */
export async function signInMemberships(db: Db, user: { id: string; passwordOrgId: string | null }, organizationId?: string) {
  const conds: SQL[] = [eq(members.userId, user.id)];
  conds.push(user.passwordOrgId ? eq(members.organizationId, user.passwordOrgId) : isNotNull(members.acceptedAt));
  if (organizationId) conds.push(eq(members.organizationId, organizationId));
  return db
    .select({
      memberId: members.id,
      role: members.role,
      organizationId: organizations.id,
      organizationName: organizations.name,
      plan: organizations.plan,
      acceptedAt: members.acceptedAt,
    })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(and(...conds))
    .orderBy(asc(members.createdAt), asc(members.id));
}

/**
 * The organizations a signed-in user may switch to (the same rule as sign-in: what the account's
 * current password opens), oldest first. The dashboard's organization switcher and the OAuth
 * consent page list only these: a pending membership another organization added is not shown.
 */
export async function switchableMemberships(db: Db, userId: string) {
  const user = await db.select({ id: users.id, passwordOrgId: users.passwordOrgId }).from(users).where(eq(users.id, userId)).get();
  return user ? signInMemberships(db, user) : [];
}

import { eq } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { creditLedger, masterKeys, members, organizations, projects, users, type Plan } from "../db/schema";
import { ApiError } from "../errors/api-error";
import { newId } from "../lib/ids";
import { hashPassword, verifyPassword } from "../auth/password";
import { requireHashSecret } from "../lib/crypto";
import { createGatewayKey, publicKey } from "../keys/create";
import { publicOrganization, publicProject } from "./view";
import { newMasterKeyValues } from "./master-keys";
import { sendInvitation } from "./memberships";

export interface BootstrapInput {
  name: string;
  plan: Plan;
  owner: { email: string; name: string; password: string };
  /** Starting credit balance in pico-dollars (tests, demo). */
  creditsPico?: number;
}

/**
 * The owner's user: a new one, or an existing user with that e-mail when the password matches
 * (one person owning several organizations). A different password is a 409, never a takeover.
 * An existing account without a password of its own (another organization added the address,
 * with a password it chose or none) blocks nothing: the owner membership starts
 * pending and the invitation is e-mailed, like any membership of an existing account; accepting
 * it sets the person's own password. The password in the request is not used then.
 */
async function ownerUser(env: Env, owner: BootstrapInput["owner"], email: string): Promise<{ userId: string; isNew: boolean; pending: boolean }> {
  const existing = await getDb(env.DB).select({ id: users.id, passwordHash: users.passwordHash, passwordOrgId: users.passwordOrgId }).from(users).where(eq(users.email, email)).get();
  if (!existing) return { userId: newId("user"), isNew: true, pending: false };
  if (existing.passwordHash === null || existing.passwordOrgId !== null) return { userId: existing.id, isNew: false, pending: true };
  if (!(await verifyPassword(owner.password, existing.passwordHash))) {
    throw new ApiError(409, "A user with this e-mail already exists; send that user's password to make them the owner.", {
      type: "invalid_request_error",
      code: "user_exists",
      param: "owner.email",
    });
  }
  return { userId: existing.id, isNew: false, pending: false };
}

/**
 * Contract section 3: an organization, its owner (user + member), a default project with its
 * playground key, and a master key. Returns the secrets once; nothing else secret is returned.
 */
export async function bootstrapOrganization(env: Env, input: BootstrapInput) {
  requireHashSecret(env);
  const db = getDb(env.DB);
  const orgId = newId("org");
  const memberId = newId("mem");
  const projectId = newId("proj");
  const email = input.owner.email.trim().toLowerCase();
  const { userId, isNew, pending } = await ownerUser(env, input.owner, email);

  const insertOrg = db.insert(organizations).values({ id: orgId, name: input.name, plan: input.plan, creditsPico: input.creditsPico ?? 0 }).returning();
  const insertMember = db.insert(members).values({ id: memberId, organizationId: orgId, userId, role: "owner", name: input.owner.name, acceptedAt: pending ? null : Date.now() });
  const insertProject = db.insert(projects).values({ id: projectId, organizationId: orgId, name: "Default project", isDefault: true, cachingEnabled: false }).returning();
  const master = await newMasterKeyValues(env, orgId, "Created with the organization", { via: "bootstrap", id: null });
  const insertMaster = db.insert(masterKeys).values(master.values);
  // The starting balance is the ledger's first entry (src/billing/credit-ledger.ts).
  const startCredits = input.creditsPico ?? 0;
  const insertCredits = db
    .insert(creditLedger)
    .values({ id: newId("cred"), organizationId: orgId, amountPico: startCredits, balanceAfterPico: startCredits, reason: "Starting balance", source: "bootstrap" });
  const passwordHash = isNew ? await hashPassword(input.owner.password) : null;
  const [orgRows, projectRows] = passwordHash
    ? await db
        .batch([insertOrg, db.insert(users).values({ id: userId, email, name: input.owner.name, passwordHash }), insertMember, insertProject, insertMaster])
        .then((r) => [r[0], r[3]] as const)
    : await db.batch([insertOrg, insertMember, insertProject, insertMaster]).then((r) => [r[0], r[2]] as const);
  if (startCredits > 0) await insertCredits;
  if (pending) await sendInvitation(env, orgId, memberId, email);
  const playground = await createGatewayKey(env, {
    organizationId: orgId,
    projectId,
    createdBy: memberId,
    description: "Playground",
    kind: "playground",
  });
  return {
    organization: publicOrganization(orgRows[0]!),
    owner: { userId, memberId, email },
    project: publicProject(projectRows[0]!),
    masterKey: { id: master.values.id, token: master.token },
    playgroundKey: { ...publicKey(playground.row), token: playground.token },
  };
}

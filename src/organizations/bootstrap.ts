import type { Env } from "../env";
import { getDb } from "../db/client";
import { masterKeys, members, organizations, projects, users, type Plan } from "../db/schema";
import { fingerprint, newMasterSecret, prefixHint } from "../lib/crypto";
import { newId } from "../lib/ids";
import { hashPassword } from "../auth/password";
import { requireHashSecret } from "../auth/gateway-key";
import { createGatewayKey, publicKey } from "../keys/create";

export interface BootstrapInput {
  name: string;
  plan: Plan;
  owner: { email: string; name: string; password: string };
  /** Starting credit balance in pico-dollars (tests, demo). */
  creditsPico?: number;
}

/**
 * Contract section 3: an organization, its owner (user + member), a default project with its
 * playground key, and a master key. Returns the secrets once.
 */
export async function bootstrapOrganization(env: Env, input: BootstrapInput) {
  const hashSecret = requireHashSecret(env);
  const db = getDb(env.DB);
  const orgId = newId("org");
  const userId = newId("user");
  const memberId = newId("mem");
  const projectId = newId("proj");
  const masterId = newId("mk");
  const masterToken = newMasterSecret();
  const email = input.owner.email.trim().toLowerCase();

  const [orgRows, , , projectRows] = await db.batch([
    db.insert(organizations).values({ id: orgId, name: input.name, plan: input.plan, creditsPico: input.creditsPico ?? 0 }).returning(),
    db.insert(users).values({ id: userId, email, name: input.owner.name, passwordHash: await hashPassword(input.owner.password) }).onConflictDoNothing(),
    db.insert(members).values({ id: memberId, organizationId: orgId, userId, role: "owner" }),
    db.insert(projects).values({ id: projectId, organizationId: orgId, name: "Default project", isDefault: true }).returning(),
    db.insert(masterKeys).values({ id: masterId, organizationId: orgId, fingerprint: await fingerprint(hashSecret, masterToken), prefixHint: prefixHint(masterToken) }),
  ]);
  const playground = await createGatewayKey(env, {
    organizationId: orgId,
    projectId,
    createdBy: memberId,
    description: "Playground",
    kind: "playground",
  });
  return {
    organization: orgRows[0]!,
    owner: { userId, memberId, email },
    project: projectRows[0]!,
    masterKey: { id: masterId, token: masterToken },
    playgroundKey: { ...publicKey(playground.row), token: playground.token },
  };
}

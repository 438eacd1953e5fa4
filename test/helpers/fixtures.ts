/**
 * Shared test fixtures. Tests run inside workerd against real D1 and Durable Objects; storage is
 * isolated per test file, so every file seeds what it needs.
 */
import { env, exports } from "cloudflare:workers";
import { bootstrapOrganization } from "../../src/organizations/bootstrap";
import { createGatewayKey, type NewKeyInput } from "../../src/keys/create";
import type { Plan } from "../../src/db/schema";
import { TEST_SECRETS } from "./secrets";
import { ApiError } from "../../src/errors/api-error";

let counter = 0;

/** Calls the Worker's own fetch handler (same isolate as the test). */
export function call(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("authorization", `Bearer ${init.key}`);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  return exports.default.fetch(new Request(`http://gw.test${path}`, { ...init, headers }));
}

/** JSON body helper: `call(path, { method: "POST", ...json({...}) })`. */
export const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });

export interface SeededOrg {
  orgId: string;
  projectId: string;
  ownerMemberId: string;
  ownerEmail: string;
  ownerPassword: string;
  masterKey: string;
  playgroundKey: string;
  playgroundKeyId: string;
  /** A standard key in the default project, created by the owner. */
  key: string;
  keyId: string;
}

/** Bootstraps an organization (contract section 3) plus one standard gateway key. */
export async function seedOrg(opts: { plan?: Plan; creditsUsd?: number; name?: string } = {}): Promise<SeededOrg> {
  const n = ++counter;
  const ownerPassword = "correct horse battery staple";
  const ownerEmail = `owner${n}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const boot = await bootstrapOrganization(env, {
    name: opts.name ?? `Org ${n}`,
    plan: opts.plan ?? "enterprise",
    owner: { email: ownerEmail, name: `Owner ${n}`, password: ownerPassword },
    creditsPico: Math.round((opts.creditsUsd ?? 100) * 1e6) * 1e6,
  });
  const std = await createGatewayKey(env, {
    organizationId: boot.organization.id,
    projectId: boot.project.id,
    createdBy: boot.owner.memberId,
    description: "test key",
  });
  return {
    orgId: boot.organization.id,
    projectId: boot.project.id,
    ownerMemberId: boot.owner.memberId,
    ownerEmail,
    ownerPassword,
    masterKey: boot.masterKey.token,
    playgroundKey: boot.playgroundKey.token,
    playgroundKeyId: boot.playgroundKey.id,
    key: std.token,
    keyId: std.row.id,
  };
}

/** Another gateway key in a seeded org. */
export async function addKey(org: SeededOrg, input: Partial<NewKeyInput> = {}) {
  return createGatewayKey(env, {
    organizationId: org.orgId,
    projectId: org.projectId,
    createdBy: org.ownerMemberId,
    ...input,
  });
}

export { TEST_SECRETS };

/** Awaits a promise expected to throw an ApiError and returns its status, code and message. */
export async function rejection(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected a rejection");
}

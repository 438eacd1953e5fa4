/**
 * Revoking, rolling or deleting the project of a platform secret key (`sk_`) while its backend is
 * minting sessions: a mint that authenticated before the change must not leave a live session
 * behind. The session insert commits only while the key (with the secret the mint used) and its
 * project are still live, checked in the same write as the insert (src/platform/sessions.ts).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { and, eq, ne } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user } from "../chat/helpers";
import { getDb } from "../../src/db/client";
import { apiKeys, platformKeys, projects } from "../../src/db/schema";
import { mintSession, type Minter } from "../../src/platform/sessions";
import { ApiError } from "../../src/errors/api-error";

type Json = Record<string, any>;

async function createSk(org: SeededOrg, projectId = org.projectId): Promise<Json> {
  const res = await call("/v1/master/platform-keys", { method: "POST", key: org.masterKey, ...json({ projectId, description: "leaky" }) });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as Json).secretKey;
}

const mintRaw = (sk: string, i: number) => call("/v1/sessions", { method: "POST", key: sk, ...json({ endUserId: `user-${i}`, spendCap: "1000000", expiresIn: 86_400 }) });

/**
 * Starts `n` mints one after another without waiting for their answers (a backend under load), and
 * `change` while a third of them are started, so mints are at every step when the change commits:
 * before authentication, between authentication and insert, after the insert.
 */
async function mintsRacing(sk: string, n: number, change: () => Promise<Response>): Promise<{ minted: string[]; statuses: number[]; change: Response }> {
  const mints: Array<Promise<{ status: number; body: Json }>> = [];
  let changed: Promise<Response> | undefined;
  for (let i = 0; i < n; i++) {
    if (i === Math.floor(n / 3)) changed = change();
    mints.push(mintRaw(sk, i).then(async (res) => ({ status: res.status, body: (await res.json()) as Json })));
    await new Promise((r) => setTimeout(r, 2));
  }
  const results = await Promise.all(mints);
  return {
    minted: results.filter((r) => r.status === 201).map((r) => r.body.session.token as string),
    statuses: results.map((r) => r.status),
    change: await changed!,
  };
}

const chatStatus = async (token: string) => (await chat(token, { model: "gpt-4o-mini", messages: user("after the change"), max_tokens: 8 })).status;

describe("platform key changes racing session mints", () => {
  it("100 concurrent mints racing a revoke: no session of the key works afterwards", { timeout: 120_000 }, async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const { minted, statuses, change } = await mintsRacing(sk.token, 100, () => call(`/v1/master/platform-keys/${sk.id}`, { method: "DELETE", key: org.masterKey }));
    expect(change.status).toBe(200);
    // every mint either committed before the revoke (and was swept by it) or was refused
    for (const s of statuses) expect([201, 401]).toContain(s);
    expect(minted.length).toBeGreaterThan(0);
    const chats = await Promise.all(minted.map(chatStatus));
    expect(chats.filter((s) => s !== 401)).toEqual([]);
    const live = await getDb(env.DB)
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(and(eq(apiKeys.platformKeyId, sk.id), ne(apiKeys.status, "deleted")));
    expect(live).toEqual([]);
    const listed = (await (await call("/v1/master/platform-keys", { key: org.masterKey })).json()) as Json;
    expect(listed.secretKeys[0]).toMatchObject({ status: "revoked", activeSessions: 0 });
  });

  it("mints racing the deletion of the key's project leave no live session in the deleted project", { timeout: 120_000 }, async () => {
    const org = await seedOrg();
    const created = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json({ name: "doomed" }) });
    expect(created.status, await created.clone().text()).toBe(201);
    const projectId = ((await created.json()) as Json).project.id as string;
    const sk = await createSk(org, projectId);
    const { minted, statuses, change } = await mintsRacing(sk.token, 60, () => call(`/v1/master/projects/${projectId}`, { method: "DELETE", key: org.masterKey }));
    expect(change.status).toBe(200);
    for (const s of statuses) expect([201, 404]).toContain(s);
    expect((await Promise.all(minted.map(chatStatus))).filter((s) => s !== 401)).toEqual([]);
    const live = await getDb(env.DB)
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId))
      .where(and(eq(apiKeys.projectId, projectId), ne(apiKeys.status, "deleted")));
    expect(live).toEqual([]);
  });
});

/**
 * The same interleaving, made deterministic: a mint that authenticated (its context holds the
 * secret's fingerprint) reaches its insert only after the change committed.
 */
describe("a mint whose key changed after it authenticated", () => {
  async function authenticated(org: SeededOrg, projectId = org.projectId): Promise<{ sk: Json; minter: Minter }> {
    const sk = await createSk(org, projectId);
    const row = (await getDb(env.DB).select().from(platformKeys).where(eq(platformKeys.id, sk.id)).get())!;
    return { sk, minter: { platformKeyId: row.id, organizationId: row.organizationId, projectId: row.projectId, createdBy: row.createdBy, fingerprint: row.fingerprint } };
  }
  const body = { endUserId: "late", spendCap: "5", expiresIn: 3600 };
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    return { status: (err as ApiError).status, code: (err as ApiError).code };
  };
  const sessionRows = (platformKeyId: string) => getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.platformKeyId, platformKeyId));

  it("a session this isolate has cached (context and lease) is refused on the first request after the revoke", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await mintRaw(sk.token, i);
      tokens.push(((await res.json()) as Json).session.token);
    }
    // warm: each token's context is cached here, and its object granted this isolate a lease
    for (const t of tokens) expect(await chatStatus(t)).toBe(200);
    expect((await call(`/v1/master/platform-keys/${sk.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    for (const t of tokens) expect(await chatStatus(t)).toBe(401);
  });

  it("revoked: the session is not written (401)", async () => {
    const org = await seedOrg();
    const { sk, minter } = await authenticated(org);
    expect((await call(`/v1/master/platform-keys/${sk.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    expect(await refusal(mintSession(env, minter, body))).toEqual({ status: 401, code: "invalid_platform_key" });
    expect(await sessionRows(sk.id)).toEqual([]);
  });

  it("rolled: the old secret's mint is not written (401); the new secret mints", async () => {
    const org = await seedOrg();
    const { sk, minter } = await authenticated(org);
    const rolled = await call(`/v1/master/platform-keys/${sk.id}/roll`, { method: "POST", key: org.masterKey });
    expect(rolled.status).toBe(200);
    expect(await refusal(mintSession(env, minter, body))).toEqual({ status: 401, code: "invalid_platform_key" });
    expect(await sessionRows(sk.id)).toEqual([]);
    const fresh = await mintRaw(((await rolled.json()) as Json).secretKey.token, 1);
    expect(fresh.status).toBe(201);
  });
});

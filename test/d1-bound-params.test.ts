/**
 * D1 binds at most 100 parameters per statement ("D1_ERROR: too many SQL variables";
 * developers.cloudflare.com/d1/platform/limits/), and the local D1 these tests run on enforces the
 * same limit (101 bound values fail, 100 pass: the first test checks it, so the others prove
 * something). Every query below used to bind one parameter per key, team or member (the usage
 * breakdown: per key of the page, plus the organization) and failed past about 100 of them; each
 * test seeds 150.
 *
 * Bulk rows are inserted straight into D1 (one statement per row in a batch), the way the code
 * paths would leave them, so that seeding 150 keys costs no 150 object registrations.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { app } from "../src/app";
import type { Env } from "../src/env";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { signIn } from "./dashboard/session";
import { getDb } from "../src/db/client";
import { apiKeys, keySpend, members, teamMembers, teams, usageHourly, users } from "../src/db/schema";
import { applyRows, type LogRowInsert } from "./helpers/logs";
import { newId } from "../src/lib/ids";
import { formatDate } from "../src/dashboard/format";
import { expireKeys } from "../src/keys/expire";
import { getUsageBreakdown, type AnalyticsScope } from "../src/usage/analytics";
import { eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";

const N = 150;
const DAY = 86_400_000;

const db = () => getDb(env.DB);

/** Runs the statements as D1 batches (a batch is not subject to the per-statement limit). */
async function runAll(stmts: Array<BatchItem<"sqlite">>): Promise<void> {
  for (let i = 0; i < stmts.length; i += 50) {
    const [first, ...rest] = stmts.slice(i, i + 50);
    if (first) await db().batch([first, ...rest]);
  }
}

/** `n` accepted developers of the organization (users + members rows), each with a distinct e-mail. */
async function insertMembers(org: SeededOrg, n: number): Promise<Array<{ id: string; email: string }>> {
  const tag = crypto.randomUUID().slice(0, 8);
  const rows = Array.from({ length: n }, (_, i) => ({ id: newId("mem"), userId: newId("usr"), email: `bulk${i}-${tag}@example.test` }));
  await runAll(
    rows.flatMap((r, i) => [
      db().insert(users).values({ id: r.userId, email: r.email, name: `Bulk ${i}` }),
      db().insert(members).values({ id: r.id, organizationId: org.orgId, userId: r.userId, role: "developer", name: `Bulk ${i}`, acceptedAt: Date.now() }),
    ]),
  );
  return rows.map(({ id, email }) => ({ id, email }));
}

interface BulkKey {
  id: string;
  createdBy: string;
  description: string;
}

/** `n` keys of the org's default project, created by `creators` in turn, each with its settled spend row. */
async function insertKeys(org: SeededOrg, creators: readonly string[], n: number, extra: { expiresAt?: number } = {}): Promise<BulkKey[]> {
  const now = Date.now();
  const tag = crypto.randomUUID().slice(0, 8);
  const keys = Array.from({ length: n }, (_, i) => ({ id: newId("key"), createdBy: creators[i % creators.length]!, description: `bulk ${tag} ${i}` }));
  await runAll(
    keys.flatMap((k, i) => [
      db()
        .insert(apiKeys)
        .values({
          id: k.id,
          organizationId: org.orgId,
          projectId: org.projectId,
          createdBy: k.createdBy,
          description: k.description,
          fingerprint: `fp-${crypto.randomUUID()}`,
          prefixHint: `swb_bulk...${String(i).padStart(4, "0")}`,
          expiresAt: extra.expiresAt ?? null,
          createdAt: now - i,
          updatedAt: now,
        }),
      db().insert(keySpend).values({ apiKeyId: k.id, updatedAt: now }),
    ]),
  );
  return keys;
}

/** A request record as the gateway sends it (only what the queries read matters). */
const logRow = (organizationId: string, projectId: string, apiKeyId: string, createdAt: number): LogRowInsert => ({
  id: newId("log"),
  requestId: newId("req"),
  organizationId,
  projectId,
  apiKeyId,
  requestedModel: "gpt-4o-mini",
  statusCode: 200,
  createdAt,
});

const html = (s: { cookie: string }, path: string) => call(path, { headers: { cookie: s.cookie, accept: "text/html" } });

/** The `<tr data-key-id=...>` row of one key on the Keys page. */
function keyRow(page: string, id: string): string {
  const start = page.indexOf(`<tr data-key-id="${id}"`);
  expect(start, id).toBeGreaterThanOrEqual(0);
  return page.slice(start, page.indexOf("</tr>", start));
}

async function addDeveloper(org: SeededOrg): Promise<{ id: string; email: string; password: string }> {
  const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "dev", role: "developer", password }) });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { member: { id: string } }).member.id, email, password };
}

describe("local D1 enforces the 100-parameter limit", () => {
  it("binds 100 values and refuses 101 with D1's error", async () => {
    const inList = (n: number) => `SELECT 1 AS one WHERE 1 IN (${Array.from({ length: n }, () => "?").join(",")})`;
    const values = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect((await env.DB.prepare(inList(100)).bind(...values(100)).all()).results).toHaveLength(1);
    await expect(env.DB.prepare(inList(101)).bind(...values(101)).all()).rejects.toThrow(/too many SQL variables/);
  });
});

describe(`Keys page with ${N} keys`, () => {
  it(`an owner sees all ${N} keys with their creators (120 members) and their own organization's last use`, async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const creators = await insertMembers(org, 120);
    const keys = await insertKeys(org, creators.map((c) => c.id), N);
    const t0 = Date.UTC(2030, 0, 10, 12, 0);
    const first = keys[0]!;
    const last = keys[N - 1]!;
    await applyRows([
      logRow(org.orgId, org.projectId, first.id, t0),
      logRow(org.orgId, org.projectId, first.id, t0 - DAY),
      logRow(org.orgId, org.projectId, last.id, t0 + DAY),
      // Another organization's log naming this key never counts as its use.
      logRow(other.orgId, other.projectId, first.id, t0 + 5 * DAY),
    ]);

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await html(s, "/dashboard/keys");
    expect(res.status).toBe(200);
    const page = await res.text();
    for (const k of keys) keyRow(page, k.id);
    expect(keyRow(page, first.id)).toContain(formatDate(t0));
    expect(keyRow(page, last.id)).toContain(formatDate(t0 + DAY));
    expect(keyRow(page, keys[1]!.id)).toContain(">never<");
    for (const [i, k] of keys.entries()) expect(keyRow(page, k.id), k.id).toContain(creators[i % creators.length]!.email);
    // Seeded key: created by the owner, never used.
    expect(keyRow(page, org.keyId)).toContain(org.ownerEmail);
    expect(page).not.toContain(other.keyId);

    // The session API lists the same keys.
    const api = await call(`/api/keys?projectId=${org.projectId}`, { headers: { cookie: s.cookie } });
    expect(api.status).toBe(200);
    const ids = ((await api.json()) as { apiKeys: Array<{ id: string }> }).apiKeys.map((k) => k.id);
    expect(ids).toEqual(expect.arrayContaining(keys.map((k) => k.id)));
  });

  it(`a developer with ${N} keys sees exactly their own, with their last use`, async () => {
    const org = await seedOrg();
    const dev = await addDeveloper(org);
    const mine = await insertKeys(org, [dev.id], N);
    const others = await insertKeys(org, [org.ownerMemberId], 5);
    const t0 = Date.UTC(2030, 1, 3, 8, 30);
    await applyRows([logRow(org.orgId, org.projectId, mine[7]!.id, t0), logRow(org.orgId, org.projectId, others[0]!.id, t0 + DAY)]);

    const s = await signIn(dev.email, dev.password);
    const res = await html(s, "/dashboard/keys");
    expect(res.status).toBe(200);
    const page = await res.text();
    const listed = [...page.matchAll(/<tr data-key-id="([^"]+)"/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual(mine.map((k) => k.id).sort());
    expect(keyRow(page, mine[7]!.id)).toContain(formatDate(t0));
    expect(keyRow(page, mine[7]!.id)).toContain(dev.email);
    expect(keyRow(page, mine[8]!.id)).toContain(">never<");
  });
});

describe("Keys page: last use", () => {
  it("reads each key's last use by its key_last_use row, never scanning the organization's logs", async () => {
    const org = await seedOrg();
    const t0 = Date.UTC(2030, 0, 10, 12, 0);
    await applyRows([logRow(org.orgId, org.projectId, org.keyId, t0), logRow(org.orgId, org.projectId, org.keyId, t0 - DAY)]);
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    // The page rendered with a D1 binding that records every statement it prepares.
    const statements: string[] = [];
    const recording = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare") return (query: string) => (statements.push(query), target.prepare(query));
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const res = await app.fetch(
      new Request("http://gw.test/dashboard/keys", { headers: { cookie: s.cookie, accept: "text/html" } }),
      Object.create(env, { DB: { value: recording, enumerable: true } }) as Env,
      createExecutionContext(),
    );
    expect(res.status).toBe(200);
    expect(keyRow(await res.text(), org.keyId)).toContain(formatDate(t0));
    expect(statements.filter((q) => q.includes("request_logs"))).toEqual([]);
    const lastUse = statements.filter((q) => q.includes("key_last_use"));
    expect(lastUse).toHaveLength(1);
    const params = (lastUse[0]!.match(/\?/g) ?? []).length;
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${lastUse[0]}`).bind(...Array<null>(params).fill(null)).all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toContain("sqlite_autoindex_key_last_use_1");
    expect(details).not.toMatch(/SCAN key_last_use/);
  });
});

describe(`teams of an organization with ${N} teams`, () => {
  it("the master API and the Organization page list every team with its own members only", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const dev = await addDeveloper(org);
    const now = Date.now();
    const rows = Array.from({ length: N }, (_, i) => ({ id: newId("team"), name: `Team ${String(i).padStart(3, "0")}`, createdAt: now + i }));
    const otherTeam = newId("team");
    await runAll([
      ...rows.map((t) => db().insert(teams).values({ ...t, organizationId: org.orgId })),
      ...rows.filter((_, i) => i % 2 === 0).map((t) => db().insert(teamMembers).values({ teamId: t.id, memberId: org.ownerMemberId, createdAt: now })),
      db().insert(teamMembers).values({ teamId: rows[0]!.id, memberId: dev.id, createdAt: now + 1 }),
      db().insert(teams).values({ id: otherTeam, organizationId: other.orgId, name: "Other", createdAt: now }),
      db().insert(teamMembers).values({ teamId: otherTeam, memberId: other.ownerMemberId, createdAt: now }),
    ]);

    const res = await call("/v1/master/teams", { key: org.masterKey });
    expect(res.status).toBe(200);
    const listed = ((await res.json()) as { teams: Array<{ id: string; memberIds: string[] }> }).teams;
    expect(listed.map((t) => t.id)).toEqual(rows.map((t) => t.id));
    expect(listed[0]!.memberIds).toEqual([org.ownerMemberId, dev.id]);
    for (const [i, t] of listed.entries()) if (i > 0) expect(t.memberIds, t.id).toEqual(i % 2 === 0 ? [org.ownerMemberId] : []);

    const otherList = ((await (await call("/v1/master/teams", { key: other.masterKey })).json()) as { teams: Array<{ id: string; memberIds: string[] }> }).teams;
    expect(otherList).toEqual([expect.objectContaining({ id: otherTeam, memberIds: [other.ownerMemberId] })]);

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const orgPage = await html(s, "/dashboard/organization");
    expect(orgPage.status).toBe(200);
    const text = await orgPage.text();
    expect(text).toContain("Team 000");
    expect(text).toContain("Team 149");
  });
});

describe(`a team rule with ${N} team members`, () => {
  it("bumps the version of every key the members created, and no other key", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const people = await insertMembers(org, N);
    const keys = await insertKeys(org, people.map((p) => p.id), N);
    const team = newId("team");
    await runAll([
      db().insert(teams).values({ id: team, organizationId: org.orgId, name: "Big team" }),
      ...people.map((p) => db().insert(teamMembers).values({ teamId: team, memberId: p.id })),
    ]);

    const res = await call(`/v1/master/teams/${team}/iam`, {
      method: "POST",
      key: org.masterKey,
      ...json({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } }),
    });
    expect(res.status, await res.clone().text()).toBe(201);

    const versions = await db().select({ id: apiKeys.id, version: apiKeys.version }).from(apiKeys).where(inArray(apiKeys.projectId, [org.projectId, other.projectId]));
    const versionOf = new Map(versions.map((v) => [v.id, v.version]));
    for (const k of keys) expect(versionOf.get(k.id), k.id).toBe(2);
    expect(versionOf.get(org.keyId)).toBe(1);
    expect(versionOf.get(other.keyId)).toBe(1);
  });
});

describe(`the expiry job with ${N} keys due at once`, () => {
  // 150 keys, each synced to its object: allowed longer than the default 20 s on a loaded machine.
  it("marks every due key inactive in one run and leaves the others alone", { timeout: 60_000 }, async () => {
    const org = await seedOrg();
    const now = Date.now();
    const due = await insertKeys(org, [org.ownerMemberId], N, { expiresAt: now - 60_000 });
    const later = await insertKeys(org, [org.ownerMemberId], 3, { expiresAt: now + DAY });

    expect(await expireKeys(env, now)).toBe(N);
    const rows = await db().select({ id: apiKeys.id, status: apiKeys.status, version: apiKeys.version }).from(apiKeys).where(eq(apiKeys.organizationId, org.orgId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const k of due) expect(byId.get(k.id), k.id).toEqual({ id: k.id, status: "inactive", version: 2 });
    for (const k of later) expect(byId.get(k.id)?.status, k.id).toBe("active");
    expect(byId.get(org.keyId)?.status).toBe("active");
    expect(await expireKeys(env, now)).toBe(0);
  });
});

describe(`usage breakdown by key over ${N} keys`, () => {
  it("names a full page of 100 keys and the next page, and never another organization's key", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const keys = await insertKeys(org, [org.ownerMemberId], N);
    const now = Date.now();
    const hourStart = Math.floor(now / DAY) * DAY;
    const usage = (apiKeyId: string, requests: number) =>
      db().insert(usageHourly).values({
        hourStart,
        organizationId: org.orgId,
        projectId: org.projectId,
        apiKeyId,
        provider: "openai",
        model: "gpt-4o-mini",
        sourceApp: "unknown",
        requests,
        updatedAt: now,
      });
    // Key i has 1000 - i requests: the ranking is the insertion order. A row of this project naming
    // another organization's key ranks last and must not borrow that key's name.
    await runAll([...keys.map((k, i) => usage(k.id, 1000 - i)), usage(other.keyId, 1)]);

    const scope: AnalyticsScope = {
      type: "project",
      organizationId: org.orgId,
      projectId: org.projectId,
      projectName: "Default",
      memberId: org.ownerMemberId,
      role: "owner",
      description: "",
    };
    const day = new Date(hourStart).toISOString().slice(0, 10);
    const first = await getUsageBreakdown(env, scope, { from: day, to: day, groupBy: "api_key", limit: 100 }, now);
    expect(first.rows.map((r) => [r.id, r.name])).toEqual(keys.slice(0, 100).map((k) => [k.id, k.description]));
    expect(first.pagination).toMatchObject({ total: N + 1, hasMore: true, nextOffset: 100 });

    const second = await getUsageBreakdown(env, scope, { from: day, to: day, groupBy: "api_key", limit: 100, offset: 100 }, now);
    expect(second.rows.map((r) => [r.id, r.name])).toEqual([...keys.slice(100).map((k) => [k.id, k.description]), [other.keyId, "Deleted key"]]);
  });
});

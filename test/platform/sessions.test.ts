/**
 * Platform secret keys and end-user sessions (docs/platform-keys.md): a backend
 * with an `sk_` key mints a short-lived session token for an end user; a browser calls `/v1/*`
 * with it directly (CORS), capped, expiring, revocable one by one or per end user, logged and
 * analysed by end user. The `sk_` key has its own lifecycle.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user, waitForLog } from "../chat/helpers";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { bumpKeyVersions } from "../../src/keys/sync";

type Json = Record<string, any>;
const ORIGIN = "https://app.example.com";

async function createSk(org: SeededOrg, body: Json = {}): Promise<Json> {
  const res = await call("/v1/master/platform-keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, description: "web app", ...body }) });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as Json).secretKey;
}

const mintRaw = (sk: string, body: Json) => call("/v1/sessions", { method: "POST", key: sk, ...json(body) });

async function mint(sk: string, body: Json = {}): Promise<Json> {
  const res = await mintRaw(sk, { endUserId: "alice", spendCap: "1.00", expiresIn: 3600, ...body });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as Json).session;
}

const browserChat = (token: string, content: string, extra: Json = {}) =>
  chat(token, { model: "gpt-4o-mini", messages: user(content), max_tokens: 16, ...extra }, { origin: ORIGIN });

const errorCode = async (res: Response) => ((await res.json()) as Json).error.code as string;

describe("platform secret keys (sk_)", () => {
  it("create shows the secret once; list, roll and revoke; the old secret is refused at once", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    expect(sk.token).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    const list = (await (await call("/v1/master/platform-keys", { key: org.masterKey })).json()) as Json;
    expect(list.secretKeys).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(sk.token);
    expect(list.secretKeys[0]).toMatchObject({ id: sk.id, prefix: sk.prefix, projectId: org.projectId, status: "active" });

    const rolled = await call(`/v1/master/platform-keys/${sk.id}/roll`, { method: "POST", key: org.masterKey });
    expect(rolled.status).toBe(200);
    const newToken = ((await rolled.json()) as Json).secretKey.token as string;
    const old = await mintRaw(sk.token, { endUserId: "bob", spendCap: "1" });
    expect(old.status).toBe(401);
    expect(await errorCode(old)).toBe("invalid_platform_key");
    const session = await mint(newToken, { endUserId: "bob" });

    const revoked = await call(`/v1/master/platform-keys/${sk.id}`, { method: "DELETE", key: org.masterKey });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as Json).revokedSessions).toBe(1);
    expect((await mintRaw(newToken, { endUserId: "bob", spendCap: "1" })).status).toBe(401);
    // the sessions it minted stop with it
    const after = await browserChat(session.token, "after sk revoke");
    expect(after.status).toBe(401);
  });

  it("another organization's sk_ cannot mint for this project, nor revoke its sessions", async () => {
    const a = await seedOrg();
    const b = await seedOrg();
    const skA = await createSk(a);
    const skB = await createSk(b);
    const res = await mintRaw(skB.token, { endUserId: "mallory", spendCap: "5", projectId: a.projectId });
    expect(res.status).toBe(404);
    expect(await errorCode(res)).toBe("project_not_found");
    const s = await mint(skA.token);
    expect((await call(`/v1/sessions/${s.id}`, { method: "DELETE", key: skB.token })).status).toBe(404);
    expect((await call(`/v1/master/platform-keys/${skA.id}`, { method: "DELETE", key: b.masterKey })).status).toBe(404);
    expect((await browserChat(s.token, "still mine")).status).toBe(200);
    // and a master key cannot mint, nor a gateway key
    expect((await mintRaw(a.masterKey, { endUserId: "x", spendCap: "1" })).status).toBe(401);
    expect((await mintRaw(a.key, { endUserId: "x", spendCap: "1" })).status).toBe(401);
  });
});

describe("end-user sessions", () => {
  it("a browser calls /v1/chat/completions with the session token after a CORS preflight; the log names the end user", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const s = await mint(sk.token, { endUserId: "alice" });
    expect(s.token).toMatch(/^swbs_/);
    expect(s.expiresAt).toBeTruthy();
    const preflight = await call("/v1/chat/completions", {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    const res = await browserChat(s.token, "hello from the browser");
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.endUserId).toBe("alice");
    expect(log.apiKeyId).toBe(s.id);
    expect(log.projectId).toBe(org.projectId);
    // errors are readable by the browser too
    const bad = await call("/v1/chat/completions", { method: "POST", key: "swbs_" + "x".repeat(40), headers: { origin: ORIGIN, "content-type": "application/json" }, body: "{}" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("access-control-allow-origin")).toBe("*");
    // server-only APIs stay without CORS
    const master = await call("/v1/master/organization", { method: "OPTIONS", headers: { origin: ORIGIN, "access-control-request-method": "GET" } });
    expect(master.headers.get("access-control-allow-origin")).toBeNull();
    // sessions are not API keys: not listed with them, refused on MCP
    const keys = (await (await call("/v1/master/keys", { key: org.masterKey })).json()) as Json;
    expect(keys.apiKeys.map((k: Json) => k.id)).not.toContain(s.id);
    const mcp = await call("/mcp", {
      method: "POST",
      key: s.token,
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
  });

  it("the spend cap is enforced (401 usage_limit_reached); IAM restrictions from the mint apply", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const capped = await mint(sk.token, { endUserId: "carol", spendCap: "0.000001" });
    expect((await browserChat(capped.token, "first")).status).toBe(200);
    let refused: Response | null = null;
    for (let i = 0; i < 6 && !refused; i++) {
      const r = await browserChat(capped.token, `again ${i}`);
      if (r.status === 401) refused = r;
      else expect(r.status).toBe(200);
    }
    expect(refused, "the capped session is refused").not.toBeNull();
    expect(await errorCode(refused!)).toBe("usage_limit_reached");

    const narrowed = await mint(sk.token, { endUserId: "dave", iamRules: [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }] });
    expect((await browserChat(narrowed.token, "allowed")).status).toBe(200);
    const denied = await chat(narrowed.token, { model: "gpt-4o", messages: user("not allowed"), max_tokens: 16 });
    expect(denied.status).toBe(403);
    expect(await errorCode(denied)).toBe("permission_denied");
  });

  it("expiry: at most 24 h at mint; an expired session is refused", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const long = await mintRaw(sk.token, { endUserId: "erin", spendCap: "1", expiresIn: 86_401 });
    expect(long.status).toBe(400);
    expect(((await long.json()) as Json).error.param).toBe("expiresIn");
    const s = await mint(sk.token, { endUserId: "erin", expiresIn: 60 });
    expect((await browserChat(s.token, "before expiry")).status).toBe(200);
    await getDb(env.DB).update(apiKeys).set({ expiresAt: Date.now() - 1000 }).where(eq(apiKeys.id, s.id));
    await bumpKeyVersions(env, { keyId: s.id });
    const res = await browserChat(s.token, "after expiry");
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("key_expired");
  });

  it("revoke one session, or every session of an end user; other end users keep theirs", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const a1 = await mint(sk.token, { endUserId: "frank" });
    const a2 = await mint(sk.token, { endUserId: "frank" });
    const a3 = await mint(sk.token, { endUserId: "frank" });
    const other = await mint(sk.token, { endUserId: "grace" });
    for (const s of [a1, a2, a3, other]) expect((await browserChat(s.token, "warm")).status).toBe(200);

    const one = await call(`/v1/sessions/${a1.id}`, { method: "DELETE", key: sk.token });
    expect(one.status).toBe(200);
    expect(((await one.json()) as Json).session.status).toBe("revoked");
    const r1 = await browserChat(a1.token, "revoked");
    expect(r1.status).toBe(401);
    expect(await errorCode(r1)).toBe("key_deleted");
    expect((await browserChat(a2.token, "still on")).status).toBe(200);

    const all = await call(`/v1/sessions?endUserId=frank`, { method: "DELETE", key: sk.token });
    expect(all.status).toBe(200);
    expect(((await all.json()) as Json).revoked).toBe(2);
    expect((await browserChat(a2.token, "gone")).status).toBe(401);
    expect((await browserChat(a3.token, "gone")).status).toBe(401);
    expect((await browserChat(other.token, "grace keeps hers")).status).toBe(200);

    const listed = (await (await call(`/v1/master/end-user-sessions?endUserId=frank`, { key: org.masterKey })).json()) as Json;
    expect(listed.sessions.map((x: Json) => x.status)).toEqual(["revoked", "revoked", "revoked"]);
  });

  it("usage by end user: the analytics store groups requests and cost by end user", async () => {
    const org = await seedOrg();
    const sk = await createSk(org);
    const h = await mint(sk.token, { endUserId: "heidi" });
    const h2 = await mint(sk.token, { endUserId: "heidi" });
    const i = await mint(sk.token, { endUserId: "ivan" });
    const ids: string[] = [];
    for (const [s, n] of [[h, 2], [h2, 1], [i, 1]] as const) {
      for (let k = 0; k < n; k++) {
        const r = await browserChat(s.token, `usage ${k}`);
        expect(r.status).toBe(200);
        ids.push(r.headers.get("x-request-id")!);
      }
    }
    // a normal key's traffic is not an end user's
    const server = await chat(org.key, { model: "gpt-4o-mini", messages: user("server"), max_tokens: 16 });
    expect(server.status).toBe(200);
    ids.push(server.headers.get("x-request-id")!);
    for (const id of ids) await waitForLog(id);
    // the log consumer applied the hourly aggregates in the same D1 batch as the request-log row
    const res = await call(`/v1/master/end-users/usage?projectId=${org.projectId}`, { key: org.masterKey });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const byUser = Object.fromEntries(body.endUsers.map((u: Json) => [u.endUserId, u]));
    expect(Object.keys(byUser).sort()).toEqual(["heidi", "ivan"]);
    expect(byUser.heidi).toMatchObject({ requests: 3, sessions: 2 });
    expect(byUser.ivan).toMatchObject({ requests: 1, sessions: 1 });
    const sum = await getDb(env.DB).get<{ c: string }>(sql`SELECT CAST(SUM(cost_pico) AS TEXT) AS c FROM request_logs WHERE end_user_id = 'heidi'`);
    expect(Number(byUser.heidi.cost) * 1e12).toBeCloseTo(Number(sum!.c), -1);
    const filtered = (await (await call(`/v1/master/end-users/usage?endUserId=ivan`, { key: org.masterKey })).json()) as Json;
    expect(filtered.endUsers.map((u: Json) => u.endUserId)).toEqual(["ivan"]);
    // the MCP analytics tool groups by end user too (an owner's gateway key, the whole project)
    const { connectClient } = await import("../mcp/helpers");
    const client = await connectClient(org.key);
    const r = (await client.callTool({ name: "get-usage-breakdown", arguments: { group_by: "end_user" } })) as { structuredContent?: Json };
    const rows = Object.fromEntries(((r.structuredContent?.rows ?? []) as Json[]).map((row) => [row.id, row]));
    expect(r.structuredContent, JSON.stringify(r)).toBeDefined();
    expect(rows.heidi, JSON.stringify(r.structuredContent)).toMatchObject({ name: "heidi", requests: 3 });
    expect(rows.ivan).toMatchObject({ requests: 1 });
    expect(rows.unknown).toMatchObject({ name: "No end user (API keys)", requests: 1 });
    await client.close();
  });
});

describe("platform keys and sessions in the dashboard", () => {
  it("owners create and revoke sk_ keys and sessions; the Platform page lists keys, sessions and usage by end user; developers get 403", async () => {
    const { signIn } = await import("../dashboard/session");
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const api = (path: string, method = "GET", body?: Json) =>
      call(`/api${path}`, {
        method,
        headers: { cookie: owner.cookie, "x-csrf-token": owner.csrf, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const created = await api("/platform-keys", "POST", { projectId: org.projectId, description: "dashboard sk" });
    expect(created.status).toBe(201);
    const sk = ((await created.json()) as Json).secretKey;
    const s = await mint(sk.token, { endUserId: "judy" });
    const r = await browserChat(s.token, "from judy");
    expect(r.status).toBe(200);
    await waitForLog(r.headers.get("x-request-id")!);
    // the log consumer applied the hourly aggregates in the same D1 batch as the request-log row
    const page = await (await call("/dashboard/platform", { headers: { cookie: owner.cookie } })).text();
    expect(page).toContain("Platform secret keys");
    expect(page).toContain(sk.prefix);
    expect(page).toContain("judy");
    expect(page).toContain("Usage by end user");
    const revoked = await api(`/end-user-sessions?endUserId=judy`, "DELETE");
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as Json).revoked).toBe(1);
    expect((await browserChat(s.token, "revoked")).status).toBe(401);
    expect((await api(`/platform-keys/${sk.id}`, "DELETE")).status).toBe(200);
    expect((await mintRaw(sk.token, { endUserId: "judy", spendCap: "1" })).status).toBe(401);

    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    expect((await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "D", role: "developer", password: "another long password" }) })).status).toBe(201);
    const dev = await signIn(email, "another long password");
    expect((await call("/api/platform-keys", { headers: { cookie: dev.cookie } })).status).toBe(403);
  });
});

describe("members and platform keys", () => {
  it("a member a platform key acts for cannot be removed (409 member_has_keys, not a 500)", async () => {
    const org = await seedOrg();
    const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const added = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "A", role: "admin", password: "another long password" }) });
    const memberId = ((await added.json()) as Json).member.id as string;
    await createSk(org, { memberId });
    const res = await call(`/v1/master/members/${memberId}`, { method: "DELETE", key: org.masterKey });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("member_has_keys");
  });
});

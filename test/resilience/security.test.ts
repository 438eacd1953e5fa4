/**
 * Security checks:
 *  - no secret (gateway/master/provider/custom-provider tokens, ADMIN_TOKEN, KEY_HASH_SECRET,
 *    operator provider keys, session cookie, OAuth tokens and client secrets) appears in any
 *    response after the one that created it, in request_logs, or in error bodies;
 *  - the SSRF guard for custom upstream URLs, directly and through the master API in production;
 *  - constant-time comparison on the ADMIN_TOKEN, fingerprint and password paths;
 *  - cross-organization access to every master and dashboard resource is a 404.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { eq, inArray } from "drizzle-orm";
import { call, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, customModels, customProviders, iamRules, members, projects, providerKeys, requestLogs, teamMembers, teams } from "../../src/db/schema";
import { PROVIDER_IDS } from "../../src/catalog/types";
import { checkUpstreamUrl } from "../../src/lib/ssrf";
import { timingSafeEqual } from "../../src/lib/crypto";
import { callWithEnv, chat, expectEnvelope, master, waitForLog, type Json } from "./helpers";

const FAKE = () => env.FAKE_UPSTREAM_URL as string;
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

async function jsonOf(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(status);
  return JSON.parse(text) as Json;
}

interface Session {
  cookie: string;
  csrf: string;
  sessionToken: string;
}

async function signIn(email: string, password: string): Promise<Session> {
  const res = await call("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email, password }) });
  const body = await jsonOf(res, 200);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { cookie, csrf: body.csrfToken as string, sessionToken: cookie.split("=").slice(1).join("=") };
}

function dash(s: Session, method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { cookie: s.cookie, "x-csrf-token": s.csrf };
  return call(`/api${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

describe("no secret after its creation response", () => {
  it("scans every read endpoint, error body and request log row", async () => {
    // Bootstrap over HTTP, so the master key only ever appears in this creation response.
    const boot = await jsonOf(
      await call("/v1/admin/organizations", {
        method: "POST",
        key: TEST_SECRETS.ADMIN_TOKEN,
        body: JSON.stringify({ name: "Secretive", plan: "enterprise", owner: { email: `sec-${crypto.randomUUID().slice(0, 8)}@example.test`, name: "Sec", password: "a very long password 123" }, credits: "50" }),
      }),
      201,
    );
    const masterKey = boot.masterKey.token as string;
    const projectId = boot.project.id as string;
    const orgId = boot.organization.id as string;
    const ownerEmail = boot.owner.email as string;

    const created = await jsonOf(await master(masterKey, "POST", "/keys", { projectId, description: "scan" }), 201);
    const gatewayKey = created.apiKey.token as string;
    const keyId = created.apiKey.id as string;
    const providerToken = `sk-byok-${crypto.randomUUID().replaceAll("-", "")}`;
    const pk = await jsonOf(await master(masterKey, "POST", "/provider-keys", { provider: "groq", token: providerToken, label: "team groq" }), 201);
    const customToken = `cp-secret-${crypto.randomUUID().replaceAll("-", "")}`;
    const cp = await jsonOf(await master(masterKey, "POST", "/custom-providers", { name: "acme", baseUrl: `${FAKE()}/acme`, token: customToken }), 201);
    const cm = await jsonOf(await master(masterKey, "POST", "/custom-models", { providerName: "acme", modelId: "acme-large" }), 201);
    const team = await jsonOf(await master(masterKey, "POST", "/teams", { name: "scan team" }), 201);
    await jsonOf(await master(masterKey, "POST", `/keys/${keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } }), 201);
    for (const body of [pk, cp, cm]) expect(JSON.stringify(body)).not.toMatch(new RegExp(`${providerToken}|${customToken}`));

    // OAuth: a confidential client bound to the key, and an access token for it.
    const client = await jsonOf(
      await call("/oauth/register", { method: "POST", key: gatewayKey, body: JSON.stringify({ grant_types: ["client_credentials"], client_name: "scan" }) }),
      201,
    );
    const clientSecret = client.client_secret as string;
    const tokenRes = await jsonOf(await call("/oauth/token", { method: "POST", ...form({ grant_type: "client_credentials", client_id: client.client_id, client_secret: clientSecret }) }), 200);
    const accessToken = tokenRes.access_token as string;

    const session = await signIn(ownerEmail, "a very long password 123");
    const dashCreated = await jsonOf(await dash(session, "POST", "/keys", { projectId, description: "dash key" }), 201);
    const dashToken = dashCreated.apiKey.token as string;

    const secrets: Record<string, string> = {
      masterKey,
      gatewayKey,
      dashToken,
      playgroundKey: "", // filled below if the bootstrap response carried one
      providerToken,
      customToken,
      clientSecret,
      accessToken,
      sessionToken: session.sessionToken,
      ADMIN_TOKEN: TEST_SECRETS.ADMIN_TOKEN,
      KEY_HASH_SECRET: TEST_SECRETS.KEY_HASH_SECRET,
      AWS_SECRET: TEST_SECRETS.AWS_BEDROCK_SECRET_ACCESS_KEY,
      ...Object.fromEntries(PROVIDER_IDS.map((id) => [`operator:${id}`, `test-operator-key-${id}`])),
    };
    if (typeof boot.playgroundKey?.token === "string") secrets.playgroundKey = boot.playgroundKey.token;
    else delete secrets.playgroundKey;

    const transcripts: Array<{ what: string; text: string }> = [];
    const record = async (what: string, res: Response) => {
      const headers = [...res.headers].filter(([k]) => k !== "set-cookie").map(([k, v]) => `${k}: ${v}`).join("\n");
      transcripts.push({ what, text: `${res.status}\n${headers}\n${await res.text()}` });
    };

    // Traffic: successes, upstream failures quoting the credential, auth failures with wrong secrets.
    const chatAs = async (what: string, key: string, model: string, content: string, extra: Json = {}) => {
      const res = await chat(key, { model, messages: [{ role: "user", content }], ...extra });
      const requestId = res.headers.get("x-request-id");
      await record(what, res);
      if (requestId) await waitForLog(requestId);
    };
    await chatAs("chat ok", gatewayKey, "llama-3.3-70b-instruct", "hello");
    await chatAs("chat stream ok", gatewayKey, "llama-3.3-70b-instruct", "hello", { stream: true });
    await chatAs("chat byok", gatewayKey, "groq/llama-3.3-70b-instruct", "hi");
    await chatAs("chat byok echo", gatewayKey, "groq/llama-3.3-70b-instruct", "x [[fake:echo_key]]");
    await chatAs("chat custom", gatewayKey, "acme/acme-large", "hi");
    await chatAs("chat custom echo", gatewayKey, "acme/acme-large", "x [[fake:echo_key]]");
    await chatAs("chat operator echo", gatewayKey, "openai/gpt-4o-mini", "x [[fake:echo_key]]", {});
    await chatAs("chat operator echo all", gatewayKey, "llama-3.1-8b-instruct", "x [[fake:echo_key]]");
    await chatAs("chat upstream 500", gatewayKey, "llama-3.3-70b-instruct", "x [[fake:status=500]]");
    await chatAs("chat denied model", gatewayKey, "o1", "x");
    await record("chat wrong key", await chat(gatewayKey.slice(0, -1) + (gatewayKey.endsWith("a") ? "b" : "a"), { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }));
    await record("master wrong key", await master(masterKey.slice(0, -1) + "Z", "GET", "/projects"));
    await record("admin wrong token", await call("/v1/admin/organizations", { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN + "x", body: "{}" }));
    await record("master with gateway key", await master(gatewayKey, "GET", "/projects"));
    await record("chat with master key", await chat(masterKey, { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }));

    // Every read endpoint.
    for (const path of ["/projects", "/keys", `/keys?projectId=${projectId}`, `/keys/${keyId}`, `/keys/${keyId}/iam`, "/members", `/members/${encodeURIComponent(ownerEmail)}`, "/teams", `/teams/${team.team.id}`, "/provider-keys", "/custom-providers", `/custom-providers/${cp.customProvider.id}`, "/custom-models", `/custom-models/${cm.customModel.id}`, "/organization"]) {
      await record(`GET master ${path}`, await master(masterKey, "GET", path));
    }
    await record("PATCH master key", await master(masterKey, "PATCH", `/keys/${keyId}`, { description: "renamed" }));
    await record("PATCH custom provider", await master(masterKey, "PATCH", `/custom-providers/${cp.customProvider.id}`, { baseUrl: `${FAKE()}/acme/` }));
    for (const path of ["/me", "/keys", `/keys/${keyId}`, `/keys/${dashCreated.apiKey.id}`, "/notifications"]) await record(`GET dashboard ${path}`, await dash(session, "GET", path));
    await record("models with key", await call("/v1/models", { key: gatewayKey }));
    await record("health", await call("/"));
    const mcpHeaders = { accept: "application/json, text/event-stream" };
    for (const [token, label] of [[gatewayKey, "key"], [accessToken, "oauth"]] as const) {
      await record(`mcp tools/list ${label}`, await call("/mcp", { method: "POST", key: token, headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }));
      await record(
        `mcp chat ${label}`,
        await call("/mcp", { method: "POST", key: token, headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "chat", arguments: { model: "acme/acme-large", messages: [{ role: "user", content: "x [[fake:echo_key]]" }] } } }) }),
      );
    }

    const logs = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.organizationId, orgId));
    expect(logs.length).toBeGreaterThanOrEqual(8);
    for (const row of logs) transcripts.push({ what: `log ${row.requestId} ${row.statusCode}`, text: JSON.stringify(row) });

    // Rows at rest: only fingerprints / ciphertexts.
    const stored = [
      ...(await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.organizationId, orgId))),
      ...(await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.organizationId, orgId))),
      ...(await getDb(env.DB).select().from(customProviders).where(eq(customProviders.organizationId, orgId))),
    ];
    transcripts.push({ what: "stored rows", text: JSON.stringify(stored) });

    const leaks: string[] = [];
    for (const t of transcripts) {
      for (const [name, secret] of Object.entries(secrets)) {
        if (secret && t.text.includes(secret)) leaks.push(`${name} in ${t.what}: …${t.text.slice(Math.max(0, t.text.indexOf(secret) - 80), t.text.indexOf(secret) + 20)}`);
      }
    }
    expect(leaks).toEqual([]);
    // The echoing upstream was really reached (the scan would be vacuous otherwise).
    expect(transcripts.find((t) => t.what === "chat custom echo")!.text).toMatch(/^401/);
  }, 60_000);
});

describe("SSRF guard for custom upstream URLs", () => {
  const blocked = [
    "127.0.0.1", "127.1", "127.0.1", "0x7f.1", "0x7f.0.0.1", "0177.0.0.1", "0177.1", "2130706433", "0x7f000001", "017700000001",
    "127.255.255.254", "0.0.0.0", "0", "[::1]", "[0:0:0:0:0:0:0:1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]",
    "[::ffff:10.0.0.1]", "[64:ff9b::127.0.0.1]", "169.254.169.254", "169.254.0.1", "0xa9.0xfe.0xa9.0xfe", "2852039166", "[fe80::1]", "[fe80::a9fe:a9fe]",
    "[febf::1]", "10.0.0.1", "10.255.255.255", "012.1", "167772161", "172.16.0.1", "172.20.5.5", "172.31.255.254", "192.168.0.1", "192.168.255.255",
    "0xc0.0xa8.1.1", "3232235777", "100.64.0.1", "[fc00::1]", "[fd12:3456::1]", "[fdff:ffff::1]", "224.0.0.1", "255.255.255.255",
    "localhost", "LOCALHOST", "localhost.", "api.localhost", "a.b.localhost", "foo.local", "metadata.google.internal", "intranet", "metadata",
  ];
  const allowed = ["api.example.com", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "192.169.0.1", "11.0.0.1", "[2606:4700:4700::1111]", "169.253.1.1"];

  it.each(blocked)("production refuses https://%s", (host) => {
    for (const url of [`https://${host}/v1`, `https://${host}:8443/openai/v1`]) {
      const r = checkUpstreamUrl(url, { production: true });
      expect(r.ok, url).toBe(false);
    }
  });

  it.each(allowed)("production accepts https://%s", (host) => {
    expect(checkUpstreamUrl(`https://${host}/v1`, { production: true }).ok).toBe(true);
  });

  it("development/test allows loopback and private addresses, never other schemes or credentials", () => {
    for (const host of ["127.0.0.1", "127.1", "[::1]", "localhost", "10.0.0.1", "192.168.1.1", "169.254.169.254", "api.localhost"]) {
      expect(checkUpstreamUrl(`http://${host}:8790/v1`, { production: false }).ok, host).toBe(true);
    }
    for (const url of ["file:///etc/passwd", "gopher://127.0.0.1/", "ftp://localhost/", "http://user:pass@127.0.0.1/", "javascript:alert(1)", "//127.0.0.1/v1", "127.0.0.1/v1"]) {
      expect(checkUpstreamUrl(url, { production: false }).ok, url).toBe(false);
    }
    expect(checkUpstreamUrl("http://api.example.com/v1", { production: true }).ok).toBe(false);
  });

  it("the master API enforces it in production and leaves no row", async () => {
    const org = await seedOrg();
    const prod = { ENVIRONMENT: "production" };
    for (const host of ["127.1", "[::ffff:127.0.0.1]", "169.254.169.254", "10.0.0.1", "localhost", "2130706433"]) {
      const cp = await callWithEnv(prod, "/v1/master/custom-providers", { method: "POST", key: org.masterKey, body: JSON.stringify({ name: "evil", baseUrl: `https://${host}/v1`, token: "t" }) });
      const body = await expectEnvelope(cp.res, 400);
      expect(body.error.param).toBe("baseUrl");
      const pk = await callWithEnv(prod, "/v1/master/provider-keys", { method: "POST", key: org.masterKey, body: JSON.stringify({ provider: "openai", token: "sk-x", baseUrl: `https://${host}/v1` }) });
      expect((await expectEnvelope(pk.res, 400)).error.param).toBe("baseUrl");
    }
    const ok = await callWithEnv(prod, "/v1/master/custom-providers", { method: "POST", key: org.masterKey, body: JSON.stringify({ name: "good", baseUrl: "https://api.example.com/v1", token: "t" }) });
    const created = await jsonOf(ok.res, 201);
    // PATCH to a private address is refused as well.
    const patch = await callWithEnv(prod, `/v1/master/custom-providers/${created.customProvider.id}`, { method: "PATCH", key: org.masterKey, body: JSON.stringify({ baseUrl: "https://192.168.0.10/v1" }) });
    await expectEnvelope(patch.res, 400);
    const rows = await getDb(env.DB).select().from(customProviders).where(eq(customProviders.organizationId, org.orgId));
    expect(rows.map((r) => r.baseUrl)).toEqual(["https://api.example.com/v1"]);
    expect(await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.organizationId, org.orgId))).toEqual([]);
    // In test mode the same loopback URL is accepted (local stand-ins).
    await jsonOf(await master(org.masterKey, "POST", "/custom-providers", { name: "local", baseUrl: "http://127.0.0.1:9/v1", token: "t" }), 201);
  });
});

describe("constant-time comparison", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("timingSafeEqual compares exactly", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "abcd")).toBe(false);
    expect(timingSafeEqual("", "")).toBe(true);
    expect(timingSafeEqual("é", "e\u0301")).toBe(false);
    expect(timingSafeEqual("😀", "😀")).toBe(true);
  });

  /** Counts the runtime's constant-time primitive, which src/lib/crypto.ts timingSafeEqual wraps. */
  function spyPrimitive() {
    const spy = vi.spyOn(crypto.subtle, "timingSafeEqual");
    const decoded = () => spy.mock.calls.map(([a, b]) => [new TextDecoder().decode(a as Uint8Array), new TextDecoder().decode(b as Uint8Array)] as const);
    return { spy, decoded };
  }

  it("the ADMIN_TOKEN check goes through it (same and different lengths)", async () => {
    const { spy, decoded } = spyPrimitive();
    const wrong = TEST_SECRETS.ADMIN_TOKEN.slice(0, -1) + "X";
    await expectEnvelope(await call("/v1/admin/organizations", { method: "POST", key: wrong, body: "{}" }), 401);
    expect(decoded()).toContainEqual([wrong, TEST_SECRETS.ADMIN_TOKEN]);
    spy.mockClear();
    await expectEnvelope(await call("/v1/admin/organizations", { method: "POST", key: "short", body: "{}" }), 401);
    expect(spy).toHaveBeenCalled();
  });

  it("passwords are verified through it", async () => {
    const org = await seedOrg();
    const { decoded } = spyPrimitive();
    await expectEnvelope(await call("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email: org.ownerEmail, password: "wrong password 1234" }) }), 401);
    // The comparison is between two derived hashes of equal length, never the raw password.
    const calls = decoded();
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.some(([a, b]) => a.length === b.length && a !== b)).toBe(true);
    expect(calls.flat().some((s) => s.includes("wrong password"))).toBe(false);
  });

  it("key fingerprints are compared through it by the KeyState Durable Object", async () => {
    const org = await seedOrg();
    const { decoded } = spyPrimitive();
    const res = await call("/v1/models", { key: org.key });
    expect(res.status).toBe(200);
    const row = (await getDb(env.DB).select({ fp: apiKeys.fingerprint }).from(apiKeys).where(eq(apiKeys.id, org.keyId)).get())!;
    expect(decoded()).toContainEqual([row.fp, row.fp]);
  });
});

describe("cross-organization access is a 404", () => {
  let a: SeededOrg;
  let b: SeededOrg;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    a = await seedOrg({ name: "Org A" });
    b = await seedOrg({ name: "Org B" });
    const mk = (path: string, body: unknown) => master(b.masterKey, "POST", path, body).then((r) => jsonOf(r, 201));
    ids.project = (await mk("/projects", { name: "b-project" })).project.id;
    ids.key = b.keyId;
    ids.keyRule = (await mk(`/keys/${b.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } })).rule.id;
    const member = (await mk("/members", { email: `bdev-${crypto.randomUUID().slice(0, 6)}@example.test`, name: "B dev", role: "developer", password: "b developer password" })).member;
    ids.member = member.id;
    ids.memberEmail = member.email;
    ids.memberRule = (await mk(`/members/${member.id}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } })).rule.id;
    ids.team = (await mk("/teams", { name: "b-team" })).team.id;
    await mk(`/teams/${ids.team}/members`, { member: member.id });
    ids.teamRule = (await mk(`/teams/${ids.team}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } })).rule.id;
    ids.providerKey = (await mk("/provider-keys", { provider: "openai", token: "sk-b-org-secret" })).providerKey.id;
    ids.customProvider = (await mk("/custom-providers", { name: "bcorp", baseUrl: `${FAKE()}/bcorp`, token: "b-token" })).customProvider.id;
    ids.customModel = (await mk("/custom-models", { providerName: "bcorp", modelId: "b-model" })).customModel.id;
  });

  it("every master resource of another organization", async () => {
    const attempts: Array<[string, string, unknown?]> = [
      ["GET", `/projects/${ids.project}`],
      ["PATCH", `/projects/${ids.project}`, { name: "stolen" }],
      ["DELETE", `/projects/${ids.project}`],
      ["GET", `/keys/${ids.key}`],
      ["PATCH", `/keys/${ids.key}`, { status: "inactive" }],
      ["DELETE", `/keys/${ids.key}`],
      ["GET", `/keys?projectId=${b.projectId}`],
      ["POST", "/keys", { projectId: b.projectId, description: "into b" }],
      ["POST", "/keys", { projectId: a.projectId, description: "as b's member", memberId: ids.member }],
      ["GET", `/keys/${ids.key}/iam`],
      ["POST", `/keys/${ids.key}/iam`, { ruleType: "allow_models", ruleValue: { models: ["x"] } }],
      ["PATCH", `/keys/${ids.key}/iam/${ids.keyRule}`, { status: "inactive" }],
      ["DELETE", `/keys/${ids.key}/iam/${ids.keyRule}`],
      ["PATCH", `/keys/${a.keyId}/iam/${ids.keyRule}`, { status: "inactive" }],
      ["DELETE", `/keys/${a.keyId}/iam/${ids.keyRule}`],
      ["GET", `/members/${ids.member}`],
      ["GET", `/members/${encodeURIComponent(ids.memberEmail!)}`],
      ["GET", `/members/${ids.member}/iam`],
      ["POST", `/members/${ids.member}/iam`, { ruleType: "allow_models", ruleValue: { models: ["x"] } }],
      ["PATCH", `/members/${ids.member}/iam/${ids.memberRule}`, { status: "inactive" }],
      ["DELETE", `/members/${ids.member}/iam/${ids.memberRule}`],
      ["DELETE", `/members/${a.ownerMemberId}/iam/${ids.memberRule}`],
      ["GET", `/teams/${ids.team}`],
      ["POST", `/teams/${ids.team}/members`, { member: a.ownerMemberId }],
      ["DELETE", `/teams/${ids.team}/members/${ids.member}`],
      ["GET", `/teams/${ids.team}/iam`],
      ["POST", `/teams/${ids.team}/iam`, { ruleType: "allow_models", ruleValue: { models: ["x"] } }],
      ["PATCH", `/teams/${ids.team}/iam/${ids.teamRule}`, { status: "inactive" }],
      ["DELETE", `/teams/${ids.team}/iam/${ids.teamRule}`],
      ["PATCH", `/provider-keys/${ids.providerKey}`, { token: "sk-stolen-0000" }],
      ["DELETE", `/provider-keys/${ids.providerKey}`],
      ["GET", `/custom-providers/${ids.customProvider}`],
      ["PATCH", `/custom-providers/${ids.customProvider}`, { token: "stolen" }],
      ["DELETE", `/custom-providers/${ids.customProvider}`],
      ["GET", `/custom-models/${ids.customModel}`],
      ["PATCH", `/custom-models/${ids.customModel}`, { name: "stolen" }],
      ["DELETE", `/custom-models/${ids.customModel}`],
    ];
    const wrong: string[] = [];
    for (const [method, path, body] of attempts) {
      const res = await master(a.masterKey, method, path, body);
      if (res.status !== 404) wrong.push(`${method} ${path} -> ${res.status} ${(await res.text()).slice(0, 200)}`);
      else await expectEnvelope(res, 404);
    }
    // Adding A's own team member by B's e-mail or id is a 404 as well.
    const aTeam = await jsonOf(await master(a.masterKey, "POST", "/teams", { name: "a-team" }), 201);
    for (const member of [ids.member, ids.memberEmail]) {
      const res = await master(a.masterKey, "POST", `/teams/${aTeam.team.id}/members`, { member });
      if (res.status !== 404) wrong.push(`add B member ${member} to A team -> ${res.status}`);
    }
    expect(wrong).toEqual([]);

    // Custom provider names are per organization: B's name is exactly as unknown to A as any other.
    const intoB = await master(a.masterKey, "POST", "/custom-models", { providerName: "bcorp", modelId: "into-b" });
    const unknown = await master(a.masterKey, "POST", "/custom-models", { providerName: "zzzzz", modelId: "into-b" });
    expect(intoB.status).toBe(unknown.status);
    expect((await expectEnvelope(intoB)).error.message.replace("bcorp", "?")).toBe((await expectEnvelope(unknown)).error.message.replace("zzzzz", "?"));

    // Lists of A show nothing of B.
    for (const path of ["/projects", "/keys", "/members", "/teams", "/provider-keys", "/custom-providers", "/custom-models"]) {
      const text = await (await master(a.masterKey, "GET", path)).text();
      for (const id of Object.values(ids)) expect(text, `${path} lists ${id}`).not.toContain(id);
    }

    // B's resources are untouched.
    const db = getDb(env.DB);
    expect((await db.select().from(projects).where(eq(projects.id, ids.project!)).get())).toMatchObject({ name: "b-project", deletedAt: null });
    expect((await db.select().from(apiKeys).where(eq(apiKeys.id, ids.key!)).get())?.status).toBe("active");
    const rules = await db.select().from(iamRules).where(inArray(iamRules.id, [ids.keyRule!, ids.memberRule!, ids.teamRule!]));
    expect(rules.map((r) => r.status)).toEqual(["active", "active", "active"]);
    expect((await db.select().from(providerKeys).where(eq(providerKeys.id, ids.providerKey!)).get())?.tokenHint).toBe("…cret");
    expect(await db.select().from(teamMembers).where(eq(teamMembers.teamId, ids.team!))).toHaveLength(1);
    expect((await db.select().from(customProviders).where(eq(customProviders.id, ids.customProvider!)).get())?.name).toBe("bcorp");
    expect((await db.select().from(customModels).where(eq(customModels.organizationId, b.orgId))).map((m) => m.modelId)).toEqual(["b-model"]);
    expect((await db.select().from(members).where(eq(members.id, ids.member!)).get())?.organizationId).toBe(b.orgId);
    expect((await db.select().from(teams).where(eq(teams.id, ids.team!)).get())?.organizationId).toBe(b.orgId);
    expect(await db.select().from(apiKeys).where(eq(apiKeys.organizationId, b.orgId))).toHaveLength(2); // playground + standard
  }, 60_000);

  it("every dashboard resource of another organization", async () => {
    const session = await signIn(a.ownerEmail, a.ownerPassword);
    const wrong: string[] = [];
    for (const [method, path, body] of [
      ["GET", `/keys/${b.keyId}`],
      ["PATCH", `/keys/${b.keyId}`, { description: "stolen" }],
      ["POST", `/keys/${b.keyId}/roll`],
      ["DELETE", `/keys/${b.keyId}`],
      ["GET", `/keys?projectId=${b.projectId}`],
      ["POST", "/keys", { projectId: b.projectId, description: "into b" }],
      ["GET", `/keys/${b.playgroundKeyId}`],
      ["PATCH", `/provider-keys/${ids.providerKey}`, { token: "sk-stolen-0000" }],
      ["DELETE", `/teams/${ids.team}/members/${ids.member}`],
    ] as Array<[string, string, unknown?]>) {
      const res = await dash(session, method, path, body);
      if (res.status !== 404) wrong.push(`${method} ${path} -> ${res.status} ${(await res.text()).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
    const row = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, b.keyId)).get();
    expect(row).toMatchObject({ status: "active", description: "test key" });
    // B's key still works (it was neither rolled nor disabled).
    expect((await call("/v1/models", { key: b.key })).status).toBe(200);
  });
});

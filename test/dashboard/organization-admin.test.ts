/**
 * The session API behind the Organization page: members (invite, role, remove), teams,
 * provider keys, custom providers and models. Same actions as the master API (src/actions/*);
 * owners and admins only, and only an owner adds, changes or removes an owner (spec 5 rule 6).
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { signIn, type Session } from "./session";


function api(s: Session, path: string, method = "GET", body?: unknown): Promise<Response> {
  const headers = new Headers({ cookie: s.cookie, "x-csrf-token": s.csrf });
  if (body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function memberSession(org: SeededOrg, role: "owner" | "admin" | "developer") {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: role, role, password }) });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { member: { id: string } }).member.id;
  return { id, email, session: await signIn(email, password) };
}

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

describe("organization management through the session API", () => {
  it("developers get 403 on every change", async () => {
    const org = await seedOrg();
    const dev = await memberSession(org, "developer");
    const calls: Array<[string, string, unknown?]> = [
      ["/members", "POST", { email: "x@example.test", name: "X", role: "developer" }],
      [`/members/${org.ownerMemberId}`, "PATCH", { role: "developer" }],
      [`/members/${org.ownerMemberId}`, "DELETE"],
      ["/teams", "POST", { name: "T" }],
      ["/teams/team_x/members", "POST", { member: dev.id }],
      [`/teams/team_x/members/${dev.id}`, "DELETE"],
      ["/provider-keys", "POST", { provider: "openai", token: "sk-dev-0123456789" }],
      ["/provider-keys/pk_x", "PATCH", { token: "sk-dev-0123456789" }],
      ["/provider-keys/pk_x", "DELETE"],
      ["/custom-providers", "POST", { name: "mine", baseUrl: "https://example.com/v1", token: "t" }],
      ["/custom-providers/cp_x", "DELETE"],
      ["/custom-models", "POST", { providerName: "mine", modelId: "m" }],
      ["/custom-models/cm_x", "DELETE"],
    ];
    for (const [path, method, body] of calls) {
      const res = await api(dev.session, path, method, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await errorOf(res)).code).toBe("role_required");
    }
  });

  it("admins invite, change roles and remove members, but cannot add, change or remove an owner", async () => {
    const org = await seedOrg();
    const admin = await memberSession(org, "admin");
    const invited = await api(admin.session, "/members", "POST", { email: "new-dev@example.test", name: "New Dev", role: "developer" });
    expect(invited.status).toBe(201);
    const member = ((await invited.json()) as { member: { id: string; status: string; role: string } }).member;
    expect(member).toMatchObject({ status: "pending", role: "developer" });

    expect((await api(admin.session, "/members", "POST", { email: "boss@example.test", name: "Boss", role: "owner" })).status).toBe(403);
    const demote = await api(admin.session, `/members/${org.ownerMemberId}`, "PATCH", { role: "developer" });
    expect(demote.status).toBe(403);
    expect((await errorOf(demote)).code).toBe("owner_required");
    expect((await api(admin.session, `/members/${org.ownerMemberId}`, "DELETE")).status).toBe(403);
    expect((await api(admin.session, `/members/${member.id}`, "PATCH", { role: "owner" })).status).toBe(403);

    const promoted = await api(admin.session, `/members/${member.id}`, "PATCH", { role: "admin" });
    expect(promoted.status).toBe(200);
    expect(((await promoted.json()) as { member: { role: string } }).member.role).toBe("admin");
    const master = (await (await call("/v1/master/members", { key: org.masterKey })).json()) as { members: Array<{ id: string; role: string }> };
    expect(master.members.find((m) => m.id === member.id)?.role).toBe("admin");

    expect((await api(admin.session, "/members/new-dev@example.test", "DELETE")).status).toBe(200);
    expect((await call(`/v1/master/members/${member.id}`, { key: org.masterKey })).status).toBe(404);
  });

  it("owners manage owners, but the last owner stays; a member who created keys is not removed", async () => {
    const org = await seedOrg();
    const owner = await memberSession(org, "owner");
    const last = await api(owner.session, `/members/${owner.id}`, "DELETE");
    expect(last.status).toBe(200);
    const ownerSession = await signIn(org.ownerEmail, org.ownerPassword);
    const alone = await api(ownerSession, `/members/${org.ownerMemberId}`, "PATCH", { role: "admin" });
    expect(alone.status).toBe(409);
    expect((await errorOf(alone)).code).toBe("last_owner");

    const dev = await memberSession(org, "developer");
    const key = await api(dev.session, "/keys", "POST", { projectId: org.projectId, description: "dev key" });
    expect(key.status).toBe(201);
    const keep = await api(ownerSession, `/members/${dev.id}`, "DELETE");
    expect(keep.status).toBe(409);
    expect((await errorOf(keep)).code).toBe("member_has_keys");
  });

  it("session bodies are strict: an unknown field is 400", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await api(s, "/members", "POST", { email: "a@example.test", name: "A", role: "developer", isAdmin: true });
    expect(res.status).toBe(400);
    expect((await api(s, "/provider-keys", "POST", { provider: "openai", token: "sk-x-0123456789", secret: "x" })).status).toBe(400);
  });

  it("provider keys: added with the token, answered and listed with the hint only; deleted", async () => {
    const org = await seedOrg();
    const admin = await memberSession(org, "admin");
    const token = "sk-session-added-0123456789abcdef";
    const res = await api(admin.session, "/provider-keys", "POST", { provider: "openai", token, label: "Team OpenAI" });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(token);
    const pk = (JSON.parse(text) as { providerKey: { id: string; tokenHint: string; label: string } }).providerKey;
    expect(pk.label).toBe("Team OpenAI");
    const page = await call("/dashboard/organization", { headers: { cookie: admin.session.cookie, accept: "text/html" } });
    const html = await page.text();
    expect(html).toContain(pk.tokenHint);
    expect(html).not.toContain(token);
    expect((await api(admin.session, `/provider-keys/${pk.id}`, "DELETE")).status).toBe(200);
    const list = (await (await call("/v1/master/provider-keys", { key: org.masterKey })).json()) as { providerKeys: unknown[] };
    expect(list.providerKeys).toEqual([]);
  });

  it("teams, custom providers and custom models: the same actions as the master API", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const team = ((await (await api(s, "/teams", "POST", { name: "Platform" })).json()) as { team: { id: string } }).team;
    expect((await api(s, "/teams", "POST", { name: "Platform" })).status).toBe(409);
    const added = await api(s, `/teams/${team.id}/members`, "POST", { member: org.ownerEmail });
    expect(added.status).toBe(201);
    expect(((await added.json()) as { team: { memberIds: string[] } }).team.memberIds).toEqual([org.ownerMemberId]);

    const cp = await api(s, "/custom-providers", "POST", { name: "inhouse", baseUrl: "https://llm.example.com/v1", token: "inhouse-secret-token" });
    expect(cp.status).toBe(201);
    const provider = ((await cp.json()) as { customProvider: { id: string } }).customProvider;
    const cm = await api(s, "/custom-models", "POST", { providerName: "inhouse", modelId: "llama-local", name: "Llama" });
    expect(cm.status).toBe(201);
    const model = ((await cm.json()) as { customModel: { id: string; model: string } }).customModel;
    expect(model.model).toBe("inhouse/llama-local");
    expect((await api(s, `/custom-models/${model.id}`, "DELETE")).status).toBe(200);
    expect((await api(s, `/custom-providers/${provider.id}`, "DELETE")).status).toBe(200);
    const left = (await (await call("/v1/master/custom-providers", { key: org.masterKey })).json()) as { customProviders: unknown[] };
    expect(left.customProviders).toEqual([]);
  });

  it("the Organization page offers the change forms to owners and admins only", async () => {
    const org = await seedOrg();
    const dev = await memberSession(org, "developer");
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const html = async (s: Session) => (await call("/dashboard/organization", { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    const ownerPage = await html(owner);
    for (const api of ['data-api="/api/members"', 'data-api="/api/teams"', 'data-api="/api/provider-keys"', 'data-api="/api/custom-providers"', `data-api="/api/members/${dev.id}"`]) {
      expect(ownerPage).toContain(api);
    }
    expect(ownerPage).toContain(`<label class="sr-only" for="role-${dev.id}">Role of ${dev.email}</label>`);
    const devPage = await html(dev.session);
    expect(devPage).not.toMatch(/data-api="\/api\/(members|teams|provider-keys|custom-providers|custom-models)/);
    expect(devPage).toContain("Owners and admins manage members");
  });

  it("the master API changes roles and removes members through the same action", async () => {
    const org = await seedOrg();
    const added = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: "m@example.test", name: "M", role: "developer" }) });
    const id = ((await added.json()) as { member: { id: string } }).member.id;
    const patched = await call(`/v1/master/members/${id}`, { method: "PATCH", key: org.masterKey, ...json({ role: "admin" }) });
    expect(((await patched.json()) as { member: { role: string } }).member.role).toBe("admin");
    expect((await call(`/v1/master/members/${org.ownerMemberId}`, { method: "PATCH", key: org.masterKey, ...json({ role: "admin" }) })).status).toBe(409);
    expect((await call(`/v1/master/members/${id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
  });

  it("provider keys: edited in place (new token, base URL, label), hint recomputed, token never answered or shown", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const admin = await memberSession(org, "admin");
    const first = "sk-session-first-0123456789-aaaa";
    const pk = ((await (await api(admin.session, "/provider-keys", "POST", { provider: "openai", token: first, label: "Team OpenAI" })).json()) as { providerKey: { id: string } }).providerKey;

    const second = "sk-session-second-0123456789-bbbb";
    const res = await api(admin.session, `/provider-keys/${pk.id}`, "PATCH", { token: second, label: "Rotated", baseUrl: "https://llm.example.com/v1" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(second);
    expect((JSON.parse(text) as { providerKey: unknown }).providerKey).toMatchObject({ id: pk.id, label: "Rotated", baseUrl: "https://llm.example.com/v1", tokenHint: "…bbbb" });
    const listed = (await (await call("/v1/master/provider-keys", { key: org.masterKey })).json()) as { providerKeys: Array<{ tokenHint: string }> };
    expect(listed.providerKeys.map((k) => k.tokenHint)).toEqual(["…bbbb"]);
    const html = await (await call("/dashboard/organization", { headers: { cookie: admin.session.cookie, accept: "text/html" } })).text();
    expect(html).toContain("…bbbb");
    expect(html).not.toContain(second);
    expect(html).not.toContain(first);

    const empty = await api(admin.session, `/provider-keys/${pk.id}`, "PATCH", {});
    expect(empty.status).toBe(400);
    const unknown = await api(admin.session, `/provider-keys/${pk.id}`, "PATCH", { provider: "anthropic" });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe("provider");
    expect((await api(admin.session, `/provider-keys/${pk.id}`, "PATCH", { baseUrl: "ftp://x" })).status).toBe(400);
    const theirs = ((await (await call("/v1/master/provider-keys", { method: "POST", key: other.masterKey, ...json({ provider: "openai", token: "sk-theirs-0000" }) })).json()) as { providerKey: { id: string } }).providerKey;
    expect((await api(admin.session, `/provider-keys/${theirs.id}`, "PATCH", { token: "sk-stolen-0000" })).status).toBe(404);
  });

  it("teams: removing a member ends the team's rules for their keys at once; 404 when not in the team", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const dev = await memberSession(org, "developer");
    const key = ((await (await api(dev.session, "/keys", "POST", { projectId: org.projectId, description: "dev key" })).json()) as { apiKey: { token: string } }).apiKey.token;
    const team = ((await (await api(owner, "/teams", "POST", { name: "Restricted" })).json()) as { team: { id: string } }).team;
    expect((await api(owner, `/teams/${team.id}/members`, "POST", { member: dev.id })).status).toBe(201);
    expect((await api(owner, `/teams/${team.id}/iam`, "POST", { ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } })).status).toBe(201);
    const chat = () =>
      call("/v1/chat/completions", { method: "POST", key, headers: { "content-type": "application/json", "x-no-cache": "true" }, body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 3, messages: [{ role: "user", content: "hi" }] }) });
    expect((await chat()).status).toBe(403);

    const removed = await api(owner, `/teams/${team.id}/members/${dev.id}`, "DELETE");
    expect(removed.status).toBe(200);
    expect(((await removed.json()) as { message: string }).message).toBe(`Member '${dev.email}' removed from team 'Restricted'.`);
    expect((await chat()).status).toBe(200);
    const teams = (await (await call("/v1/master/teams", { key: org.masterKey })).json()) as { teams: Array<{ memberIds: string[] }> };
    expect(teams.teams[0]!.memberIds).toEqual([]);

    const again = await api(owner, `/teams/${team.id}/members/${encodeURIComponent(dev.email)}`, "DELETE");
    expect(again.status).toBe(404);
    expect((await errorOf(again)).code).toBe("not_team_member");
    const other = await seedOrg();
    const theirs = ((await (await call("/v1/master/teams", { method: "POST", key: other.masterKey, ...json({ name: "Theirs" }) })).json()) as { team: { id: string } }).team;
    await call(`/v1/master/teams/${theirs.id}/members`, { method: "POST", key: other.masterKey, ...json({ member: other.ownerMemberId }) });
    expect((await api(owner, `/teams/${theirs.id}/members/${other.ownerMemberId}`, "DELETE")).status).toBe(404);
  });

  it("the Organization page has an Edit form per provider key and a Remove button per team member (owners and admins)", async () => {
    const org = await seedOrg();
    const dev = await memberSession(org, "developer");
    const pk = ((await (await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token: "sk-page-0123456789", label: "Page key" }) })).json()) as { providerKey: { id: string } }).providerKey;
    const team = ((await (await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "Platform" }) })).json()) as { team: { id: string } }).team;
    await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: dev.id }) });
    const page = async (s: Session) => (await call("/dashboard/organization", { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    const html = await page(await signIn(org.ownerEmail, org.ownerPassword));
    expect(html).toContain(`data-api="/api/provider-keys/${pk.id}" data-method="PATCH"`);
    expect(html).toContain(`<label for="pk-edit-token-${pk.id}">New token (optional)</label>`);
    expect(html).toContain(`data-api="/api/teams/${team.id}/members/${dev.id}" data-method="DELETE"`);
    expect(html).toContain(`Remove<span class="sr-only"> ${dev.email} from Platform</span>`);
    expect(html).not.toContain("sk-page-0123456789");
    const devHtml = await page(dev.session);
    expect(devHtml).not.toContain(`/api/provider-keys/${pk.id}`);
    expect(devHtml).not.toContain(`/api/teams/${team.id}/members/`);
    expect(devHtml).toContain(dev.email);
  });
});

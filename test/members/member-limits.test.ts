/**
 * Member and team spending limits: enforced over every key the member owns, with
 * the key's admission rules (strict, no false refusals, leases), answered with the member wording
 * of the spec; analytics stay available at the limit (spec 5.5).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { admitKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { settleRequest } from "../../src/billing/settle";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { ApiError } from "../../src/errors/api-error";
import { memberBudgetName } from "../../src/members/budget";
import { chat, user } from "../chat/helpers";
import { readRpc, rpc } from "../mcp/helpers";
import { signIn } from "../dashboard/session";

const COST = 1_000_000n; // $0.000001 per request
const TEN_REQUESTS = "0.00001";

const master = (org: SeededOrg, method: string, path: string, body?: unknown) =>
  call(`/v1/master${path}`, { method, key: org.masterKey, ...(body === undefined ? {} : json(body)) });

async function addDeveloper(org: SeededOrg): Promise<string> {
  const res = await master(org, "POST", "/members", { email: `dev-${crypto.randomUUID().slice(0, 8)}@example.test`, name: "Dev", role: "developer", password: "a long enough password" });
  expect(res.status).toBe(201);
  return ((await res.json()) as { member: { id: string } }).member.id;
}

/** `n` concurrent admit + settle cycles over the given keys (round robin). */
async function burst(tokens: string[], n: number): Promise<{ admitted: number; denials: string[] }> {
  const contexts = await Promise.all(tokens.map((t) => resolveGatewayKey(env, t)));
  const results = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      try {
        const a = await admitKey(env, contexts[i % contexts.length]!, COST);
        await settleRequest(env, a.context, a.reservationId, { totalPico: COST, creditsPico: COST });
        return "ok";
      } catch (e) {
        if (e instanceof ApiError) return `${e.status}:${e.code}:${e.message}`;
        throw e;
      }
    }),
  );
  return { admitted: results.filter((r) => r === "ok").length, denials: results.filter((r) => r !== "ok") };
}

/** Waits until D1's `key_spend` holds `pico` for the key (it arrives with the key object's next report). */
async function keySpendInD1(keyId: string, pico: bigint): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const row = await env.DB.prepare("SELECT usage_pico FROM key_spend WHERE api_key_id = ?").bind(keyId).first<{ usage_pico: string }>();
    if ((row && BigInt(row.usage_pico) === pico) || Date.now() >= deadline) {
      expect(row ? BigInt(row.usage_pico) : null).toBe(pico);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("member spending limits", () => {
  it("two keys of one member share the member's all-time limit; 50 concurrent requests stay within one request of it", async () => {
    const org = await seedOrg();
    const a = await addKey(org, { description: "a" });
    const b = await addKey(org, { description: "b" });
    const set = await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: TEN_REQUESTS });
    expect(set.status, await set.clone().text()).toBe(200);
    expect(((await set.json()) as { limits: { effective: { usageLimit: string; usageLimitFrom: string } } }).limits.effective).toMatchObject({
      usageLimit: TEN_REQUESTS,
      usageLimitFrom: "member",
    });

    const { admitted, denials } = await burst([a.token, b.token], 50);
    expect(admitted).toBe(10);
    expect(denials.length).toBe(40);
    for (const d of denials) {
      expect(d).toMatch(/^401:usage_limit_reached:Usage limit reached: the owner of this API key has spent their all-time limit of \$0\.00001 \(an organization member spending limit set by the org admin\)\.$/);
    }
    const spend = await keyStateStub(env, memberBudgetName(org.ownerMemberId)).getSpend();
    expect(spend.usage).toBeLessThanOrEqual(10n * COST + COST);
    expect(spend.reserved).toBe(0n);
    // Each key's own spend is what it admitted; no key has a limit of its own.
    const keyUsage = (await keyStateStub(env, a.row.id).getSpend()).usage + (await keyStateStub(env, b.row.id).getSpend()).usage;
    expect(keyUsage).toBe(spend.usage);

    // Through HTTP too, with any key of the member; the view says the limit is reached.
    const refused = await chat(a.token, { model: "gpt-4o-mini", max_tokens: 5, messages: user("hi") });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error.message).toContain("organization member spending limit set by the org admin");
    const view = (await (await master(org, "GET", `/members/${org.ownerMemberId}/limits`)).json()) as { limits: { usage: string; limitState: { reached: boolean } } };
    expect(view.limits.usage).toBe("0.00001");
    expect(view.limits.limitState.reached).toBe(true);

    // The key APIs and the Keys page show the owner's limit as the key's state.
    const detail = (await (await master(org, "GET", `/keys/${b.row.id}`)).json()) as { apiKey: { status: string; limitState: { reached: boolean; member: { reached: boolean; memberId: string } } } };
    expect(detail.apiKey.status).toBe("active");
    expect(detail.apiKey.limitState).toMatchObject({ reached: true, member: { reached: true, memberId: org.ownerMemberId } });
    const deadline = Date.now() + 5_000;
    let listedB: { limitState: { reached: boolean; member?: { reached: boolean } } } | undefined;
    while (Date.now() < deadline) {
      const list = (await (await master(org, "GET", `/keys?projectId=${org.projectId}`)).json()) as { apiKeys: Array<{ id: string; limitState: { reached: boolean; member?: { reached: boolean } } }> };
      listedB = list.apiKeys.find((k) => k.id === b.row.id);
      if (listedB?.limitState.member?.reached) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listedB?.limitState).toMatchObject({ reached: true, member: { reached: true } });
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const page = await (await call("/dashboard/keys", { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    const rowB = page.split("<tr data-key-id=").find((r) => r.startsWith(`"${b.row.id}"`))!;
    expect(rowB).toContain("limit reached");
    expect(rowB).toContain("owner&#39;s spending limit");

    // Analytics stay available at the limit (MCP analytics tool with the same key).
    const usage = await rpc(
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get-usage", arguments: {} } },
      { key: a.token, headers: { "mcp-protocol-version": "2024-11-05" } },
    );
    expect(usage.status).toBe(200);
    const result = (await readRpc(usage)) as { result?: { isError?: boolean } };
    expect(result.result).toBeDefined();
    expect(result.result!.isError ?? false).toBe(false);

    // Raising the limit lets the member's keys through at once.
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "1" })).status).toBe(200);
    expect((await burst([b.token], 1)).admitted).toBe(1);
  });

  it("an all-time limit set later counts what the member's keys spent before", async () => {
    const org = await seedOrg();
    await keyStateStub(env, org.keyId).settle(null, 5n * COST);
    await keySpendInD1(org.keyId, 5n * COST);
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "0.000006" })).status).toBe(200);
    expect((await keyStateStub(env, memberBudgetName(org.ownerMemberId)).getSpend()).usage).toBe(5n * COST);
    const { admitted } = await burst([org.key], 5);
    expect(admitted).toBe(1);
  });

  it("a limit changed while a request's member part is on its way counts that request once", async () => {
    const org = await seedOrg();
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "1" })).status).toBe(200);
    // A request settled on its key, whose spend the key's object reported to D1, while the member
    // part still waits in the isolate's batch (SETTLE_BATCH_MS): D1 is ahead of the member's object.
    await keyStateStub(env, org.keyId).settle(null, 5n * COST);
    await keySpendInD1(org.keyId, 5n * COST);
    // The owner's limit changes meanwhile, then the member part arrives.
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "2" })).status).toBe(200);
    const budget = keyStateStub(env, memberBudgetName(org.ownerMemberId));
    await budget.settle(null, 5n * COST);
    expect((await budget.getSpend()).usage).toBe(5n * COST);
  });

  it("a team's recurring limit applies to each member of the team, with the team wording", async () => {
    const org = await seedOrg();
    const devId = await addDeveloper(org);
    const team = await master(org, "POST", "/teams", { name: "interns" });
    const teamId = ((await team.json()) as { team: { id: string } }).team.id;
    expect((await master(org, "POST", `/teams/${teamId}/members`, { member: devId })).status).toBe(201);
    const set = await master(org, "PATCH", `/teams/${teamId}/limits`, { periodUsageLimit: "0.000003", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    expect(set.status, await set.clone().text()).toBe(200);
    const devKey = await addKey(org, { createdBy: devId, description: "dev" });
    const { admitted, denials } = await burst([devKey.token], 10);
    expect(admitted).toBe(3);
    expect(denials[0]).toMatch(/recurring limit of \$0\.000003 per 1 day\(s\); the window resets at .+ \(inherited from an organization team spending limit\)\.$/);
    // The owner is not in the team: not limited.
    expect((await burst([org.key], 5)).admitted).toBe(5);
    // Taking the member out of the team ends the limit at once.
    expect((await master(org, "DELETE", `/teams/${teamId}/members/${devId}`)).status).toBe(200);
    expect((await burst([devKey.token], 2)).admitted).toBe(2);
  });

  it("the dashboard sets member and team limits (owners and admins; an admin cannot change an owner's) and shows them", async () => {
    const org = await seedOrg();
    const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const password = "an admin's long password";
    const added = await master(org, "POST", "/members", { email, name: "Admin", role: "admin", password });
    const adminId = ((await added.json()) as { member: { id: string } }).member.id;
    const devId = await addDeveloper(org);
    const team = ((await (await master(org, "POST", "/teams", { name: "ops" })).json()) as { team: { id: string } }).team.id;
    const admin = await signIn(email, password);
    const patch = (path: string, body: unknown) =>
      call(`/api${path}`, { method: "PATCH", headers: { cookie: admin.cookie, "x-csrf-token": admin.csrf, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await patch(`/members/${org.ownerMemberId}/limits`, { usageLimit: "5" })).status).toBe(403);
    expect((await patch(`/members/${devId}/limits`, { usageLimit: "5" })).status).toBe(200);
    expect((await patch(`/teams/${team}/limits`, { periodUsageLimit: "2", periodUsageDurationValue: 1, periodUsageDurationUnit: "week" })).status).toBe(200);
    expect(adminId).toBeTruthy();
    const html = await (await call("/dashboard/organization", { headers: { cookie: admin.cookie, accept: "text/html" } })).text();
    expect(html).toContain("Spending limits of members and teams");
    const devRow = html.split("<tr data-member-limits=").find((r) => r.startsWith(`"${devId}"`))!;
    expect(devRow).toMatch(/name="usageLimit"[^>]*value="5"/);
    const teamRow = html.split("<tr data-team-limits=").find((r) => r.startsWith(`"${team}"`))!;
    expect(teamRow).toMatch(/name="periodUsageLimit"[^>]*value="2"/);
    expect(teamRow).toMatch(/<option value="week" selected/);
  });

  it("validates the limits body", async () => {
    const org = await seedOrg();
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, {})).status).toBe(400);
    expect((await master(org, "PATCH", `/members/${org.ownerMemberId}/limits`, { periodUsageLimit: "1" })).status).toBe(400);
    expect((await master(org, "PATCH", `/members/nobody/limits`, { usageLimit: "1" })).status).toBe(404);
  });
});

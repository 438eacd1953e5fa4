/**
 * Contract section 4: a resource of another organization is 404 on every master route that names
 * one by id (read, change, delete, sub-resources), and the other organization's data is untouched.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "./helpers/fixtures";
import { chat, user, waitForLog } from "./chat/helpers";

type Body = Record<string, any>;
const created = async (res: Response, key: string): Promise<string> => {
  expect(res.status).toBe(201);
  return ((await res.json()) as Body)[key].id as string;
};

describe("master API across organizations", () => {
  it("every id of another organization is 404", async () => {
    const a = await seedOrg();
    const b = await seedOrg();
    const post = (path: string, body: unknown) => call(path, { method: "POST", key: b.masterKey, ...json(body) });
    const project = await created(await post("/v1/master/projects", { name: "theirs" }), "project");
    const member = await created(await post("/v1/master/members", { email: `m-${crypto.randomUUID().slice(0, 8)}@example.test`, name: "M", role: "developer" }), "member");
    const team = await created(await post("/v1/master/teams", { name: "T" }), "team");
    const keyRule = await created(await post(`/v1/master/keys/${b.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } }), "rule");
    const providerKey = await created(await post("/v1/master/provider-keys", { provider: "openai", token: "sk-theirs-0123456789" }), "providerKey");
    const customProvider = await created(await post("/v1/master/custom-providers", { name: "theirs", baseUrl: "https://api.theirs.example/v1", token: "tok-0123456789" }), "customProvider");
    const customModel = await created(await post("/v1/master/custom-models", { providerName: "theirs", modelId: "m1" }), "customModel");
    const webhook = await created(await post("/v1/master/webhooks", { url: "https://hooks.theirs.example/x", events: ["credits.low"] }), "webhook");
    const r = await chat(b.key, { model: "gpt-4o-mini", messages: user("theirs") });
    const requestId = r.headers.get("x-request-id")!;
    await waitForLog(requestId);

    const cases: Array<[string, string, unknown?]> = [
      ["GET", `/v1/master/keys/${b.keyId}`],
      ["PATCH", `/v1/master/keys/${b.keyId}`, { description: "mine now" }],
      ["DELETE", `/v1/master/keys/${b.keyId}`],
      ["GET", `/v1/master/keys/${b.keyId}/iam`],
      ["POST", `/v1/master/keys/${b.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["x"] } }],
      ["PATCH", `/v1/master/keys/${b.keyId}/iam/${keyRule}`, { status: "inactive" }],
      ["DELETE", `/v1/master/keys/${b.keyId}/iam/${keyRule}`],
      ["PATCH", `/v1/master/projects/${project}`, { name: "mine" }],
      ["DELETE", `/v1/master/projects/${project}`],
      ["GET", `/v1/master/members/${member}/iam`],
      ["POST", `/v1/master/members/${member}/iam`, { ruleType: "deny_models", ruleValue: { models: ["x"] } }],
      ["POST", `/v1/master/teams/${team}/members`, { member: a.ownerMemberId }],
      ["GET", `/v1/master/teams/${team}/iam`],
      ["DELETE", `/v1/master/provider-keys/${providerKey}`],
      ["PATCH", `/v1/master/custom-providers/${customProvider}`, { name: "mine" }],
      ["DELETE", `/v1/master/custom-providers/${customProvider}`],
      ["PATCH", `/v1/master/custom-models/${customModel}`, { name: "mine" }],
      ["DELETE", `/v1/master/custom-models/${customModel}`],
      ["DELETE", `/v1/master/webhooks/${webhook}`],
      ["POST", `/v1/master/webhooks/${webhook}/test`],
      ["GET", `/v1/master/logs/${requestId}`],
    ];
    const wrong: string[] = [];
    for (const [method, path, body] of cases) {
      const res = await call(path, { method, key: a.masterKey, ...(body === undefined ? {} : json(body)) });
      if (res.status !== 404) wrong.push(`${method} ${path} ${res.status}`);
      await res.arrayBuffer();
    }
    expect(wrong).toEqual([]);
    // Nothing of theirs changed.
    expect(((await (await call(`/v1/master/keys/${b.keyId}`, { key: b.masterKey })).json()) as Body).apiKey.description).toBe("test key");
    expect(((await (await call(`/v1/master/keys/${b.keyId}/iam`, { key: b.masterKey })).json()) as Body).rules).toHaveLength(1);
    expect(((await (await call("/v1/master/webhooks", { key: b.masterKey })).json()) as Body).webhooks).toHaveLength(1);
  });
});

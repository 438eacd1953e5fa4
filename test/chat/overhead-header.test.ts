/**
 * `x-gateway-overhead-ms` is on every answer of the chat doors (contract section 6), refusals and
 * errors included: 400 (bad body, wrong content type), 401 (unknown key), 402 (no credits), 403
 * (IAM), on chat completions, Messages and Responses.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";

const DOORS = [
  ["/v1/chat/completions", { model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }],
  ["/v1/messages", { model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }],
  ["/v1/responses", { model: "gpt-4o-mini", max_output_tokens: 16, input: "hi" }],
] as const;

function expectOverhead(res: Response, what: string): void {
  const v = res.headers.get("x-gateway-overhead-ms");
  expect(v, `${what}: ${res.status}`).not.toBeNull();
  expect(Number.isInteger(Number(v)) && Number(v) >= 0, `${what}: ${v}`).toBe(true);
}

describe("x-gateway-overhead-ms on every chat answer", () => {
  it("400, 401, 402, 403 and 200 on chat completions, Messages and Responses", async () => {
    const org = await seedOrg();
    const broke = await seedOrg({ creditsUsd: 0 });
    const denyRule = await call(`/v1/master/keys/${org.keyId}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } }) });
    expect(denyRule.status).toBe(201);
    for (const [path, body] of DOORS) {
      const send = (key: string, b: unknown, headers: Record<string, string> = {}) =>
        call(path, { method: "POST", key, body: typeof b === "string" ? b : JSON.stringify(b), headers: { "content-type": "application/json", ...headers } });
      const ok = await send(org.key, body);
      expect(ok.status, `${path} ok`).toBe(200);
      expectOverhead(ok, `${path} 200`);
      const bad = await send(org.key, "{not json");
      expect(bad.status).toBe(400);
      expectOverhead(bad, `${path} 400 body`);
      const wrongType = await send(org.key, JSON.stringify(body), { "content-type": "text/plain" });
      expect(wrongType.status).toBe(400);
      expectOverhead(wrongType, `${path} 400 content type`);
      const unknown = await send("swb_unknown_key_000000000000000000000000", body);
      expect(unknown.status).toBe(401);
      expectOverhead(unknown, `${path} 401`);
      const noCredits = await send(broke.key, body);
      expect(noCredits.status).toBe(402);
      expectOverhead(noCredits, `${path} 402`);
      const denied = await send(org.key, { ...body, model: "gpt-4o" });
      expect(denied.status, await denied.clone().text()).toBe(403);
      expectOverhead(denied, `${path} 403`);
    }
  });
});

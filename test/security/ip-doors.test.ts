/**
 * A key's IP rules apply on every door that takes the key. Before the fix an
 * IP-restricted key used from outside its range still got MCP get-account (credit balance, owner
 * e-mail), get-usage*, /v1/messages/count_tokens and /v1/models.
 */
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { connectClient, textOf } from "../mcp/helpers";

const INSIDE = { "cf-connecting-ip": "10.1.2.3" };
const OUTSIDE = { "cf-connecting-ip": "203.0.113.7" };

async function restrictedKey() {
  const org = await seedOrg();
  const key = await addKey(org, { description: "office only", iamRules: [{ ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8"] } }] });
  return { org, key: key.token };
}

interface Door {
  name: string;
  request: (key: string, headers: Record<string, string>) => Promise<Response>;
  /** The status answered inside the range. */
  inside: number;
}

const countTokens = { model: "anthropic/claude-sonnet-4", max_tokens: 16, messages: [{ role: "user", content: "hello" }] };

const DOORS: Door[] = [
  { name: "GET /v1/models", request: (key, h) => call("/v1/models", { key, headers: h }), inside: 200 },
  { name: "GET /v1/models/{id}", request: (key, h) => call("/v1/models/gpt-4o-mini", { key, headers: h }), inside: 200 },
  {
    name: "POST /v1/messages/count_tokens",
    request: (key, h) => call("/v1/messages/count_tokens", { method: "POST", key, body: JSON.stringify(countTokens), headers: { ...h, "content-type": "application/json" } }),
    inside: 200,
  },
  { name: "GET /v1/videos/{id}", request: (key, h) => call("/v1/videos/vid_doesnotexist000000000", { key, headers: h }), inside: 404 },
  {
    name: "POST /oauth/register (client_credentials)",
    request: (key, h) => call("/oauth/register", { method: "POST", key, body: JSON.stringify({ grant_types: ["client_credentials"] }), headers: { ...h, "content-type": "application/json" } }),
    inside: 201,
  },
];

describe("IP rules on every door that takes a key", () => {
  for (const door of DOORS) {
    it(`${door.name}: the normal 403 outside the range, answered inside it`, async () => {
      const { key } = await restrictedKey();
      const outside = await door.request(key, OUTSIDE);
      expect(outside.status).toBe(403);
      // The door's own envelope: the gateway's, or Anthropic's on /v1/messages.
      const body = (await outside.json()) as { error: { code?: string; type: string; message: string } };
      expect(body.error.code ?? body.error.type).toMatch(/^permission_(denied|error)$/);
      expect(body.error.message).toContain("allow_ip_cidrs");
      expect((await door.request(key, INSIDE)).status).toBe(door.inside);
    });
  }

  it("an undetermined client IP is refused too", async () => {
    const { key } = await restrictedKey();
    const res = await call("/v1/models", { key, headers: { "cf-connecting-ip": "not an ip" } });
    expect(res.status).toBe(403);
  });

  it("MCP: every tool is a tool error outside the range (no balance, e-mail or usage), and works inside", async () => {
    const { org, key } = await restrictedKey();
    const outside = await connectClient(key, { headers: OUTSIDE });
    for (const name of ["get-account", "get-usage", "get-usage-breakdown", "list-models"]) {
      const result = await outside.callTool({ name, arguments: {} });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toMatch(/allow_ip_cidrs/);
      expect(JSON.stringify(result), name).not.toContain(org.ownerEmail);
      expect(result.structuredContent, name).toBeUndefined();
    }
    await outside.close();

    const inside = await connectClient(key, { headers: INSIDE });
    const account = await inside.callTool({ name: "get-account", arguments: {} });
    expect(account.isError ?? false).toBe(false);
    await inside.close();
  });

  it("MCP through an OAuth access token: the key's IP rules still apply", async () => {
    const { key } = await restrictedKey();
    const reg = await call("/oauth/register", { method: "POST", key, ...json({ grant_types: ["client_credentials"] }), headers: { ...INSIDE, "content-type": "application/json" } });
    expect(reg.status).toBe(201);
    const client = (await reg.json()) as { client_id: string; client_secret: string };
    const minted = await call("/oauth/token", {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const token = ((await minted.json()) as { access_token: string }).access_token;
    const outside = await connectClient(token, { headers: OUTSIDE });
    const result = await outside.callTool({ name: "get-account", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/allow_ip_cidrs/);
    await outside.close();
  });
});

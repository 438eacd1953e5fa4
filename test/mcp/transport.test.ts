import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { syncKeys } from "../../src/keys/sync";
import { MCP_MAX_BODY_BYTES } from "../../src/mcp/http";
import worker from "../../src/index";
import { BASE, connectClient, initializeMessage, readRpc, rpc, workerFetch } from "./helpers";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

describe("MCP Streamable HTTP transport", () => {
  it("initialize answers with the configured protocol version and server info", async () => {
    const res = await rpc(initializeMessage(1, "2024-11-05"), { key: org.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json|text\/event-stream/);
    const body = (await readRpc(res)) as { id: number; result: { protocolVersion: string; serverInfo: { name: string }; capabilities: { tools?: unknown } } };
    expect(body.id).toBe(1);
    expect(body.result.protocolVersion).toBe("2024-11-05");
    expect(body.result.serverInfo.name).toBe("switchboard");
    expect(body.result.capabilities.tools).toBeDefined();
  });

  it("accepts newer versions the SDK knows and falls back to 2024-11-05 for unknown ones", async () => {
    const newer = (await readRpc(await rpc(initializeMessage(2, "2025-06-18"), { key: org.key }))) as { result: { protocolVersion: string } };
    expect(newer.result.protocolVersion).toBe("2025-06-18");
    const unknown = (await readRpc(await rpc(initializeMessage(3, "1999-01-01"), { key: org.key }))) as { result: { protocolVersion: string } };
    expect(unknown.result.protocolVersion).toBe("2024-11-05");
  });

  it("honours MCP-Protocol-Version: supported ok, unsupported 400", async () => {
    const ok = await rpc({ jsonrpc: "2.0", id: 5, method: "tools/list" }, { key: org.key, headers: { "mcp-protocol-version": "2024-11-05" } });
    expect(ok.status).toBe(200);
    const bad = await rpc({ jsonrpc: "2.0", id: 6, method: "tools/list" }, { key: org.key, headers: { "mcp-protocol-version": "2099-01-01" } });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/MCP-Protocol-Version|Unsupported protocol version/);
  });

  it("answers a notification with an empty 202", async () => {
    const res = await rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, { key: org.key });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  });

  it("supports JSON-RPC batches in 2024-11-05 and refuses them from 2025-06-18", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 10, method: "tools/list" },
      { jsonrpc: "2.0", id: 11, method: "ping" },
    ];
    const ok = await rpc(batch, { key: org.key, headers: { "mcp-protocol-version": "2024-11-05" } });
    expect(ok.status).toBe(200);
    const replies = (await readRpc(ok)) as Array<{ id: number }>;
    expect(replies.map((r) => r.id).sort()).toEqual([10, 11]);
    const refused = await rpc(batch, { key: org.key, headers: { "mcp-protocol-version": "2025-06-18" } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it("each message of a batch gets the reply it gets alone, invalid params (-32602) included", async () => {
    const headers = { "mcp-protocol-version": "2024-11-05" };
    const messages: Array<Record<string, unknown>> = [
      { jsonrpc: "2.0", id: 20, method: "tools/call", params: { arguments: {} } },
      { jsonrpc: "2.0", id: 21, method: "initialize", params: {} },
      { jsonrpc: "2.0", id: 22, method: "tools/list", params: { cursor: 5 } },
      { jsonrpc: "2.0", id: 23, method: "tools/call", params: "not an object" },
      { jsonrpc: "2.0", id: 24, method: "tools/call", params: { name: "get-usage-breakdown", arguments: { group_by: "nope" } } },
      { jsonrpc: "2.0", id: 25, method: "tools/call", params: { name: "no-such-tool", arguments: {} } },
      { jsonrpc: "2.0", id: 26, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ];
    const alone = new Map<unknown, unknown>();
    for (const m of messages.filter((m) => "id" in m)) alone.set(m.id, await readRpc(await rpc(m, { key: org.key, headers })));
    for (const id of [20, 21, 22, 23]) expect((alone.get(id) as { error: { code: number } }).error.code, String(id)).toBe(-32602);

    const res = await rpc(messages, { key: org.key, headers });
    expect(res.status).toBe(200);
    const replies = (await readRpc(res)) as Array<{ id: unknown }>;
    expect(replies.map((r) => r.id).sort()).toEqual([...alone.keys()].sort());
    const codeOf = (reply: unknown) => (reply as { error?: { code: number } }).error?.code;
    for (const reply of replies) expect(codeOf(reply), String(reply.id)).toBe(codeOf(alone.get(reply.id)));
    for (const reply of replies) expect(reply, String(reply.id)).toEqual(alone.get(reply.id));

    // Only invalid params (nothing left for the SDK), or next to notifications only: still one reply each.
    for (const batch of [messages.slice(0, 2), [messages[0]!, messages[7]!]]) {
      const only = await rpc(batch, { key: org.key, headers });
      expect(only.status).toBe(200);
      const got = (await readRpc(only)) as Array<{ id: unknown }>;
      expect(got.map((r) => r.id).sort()).toEqual(batch.filter((m) => "id" in m).map((m) => m.id).sort());
      for (const reply of got) expect(reply).toEqual(alone.get(reply.id));
    }
  });

  it("a batch over the SDK's 100 messages is still refused whole, invalid params or not", async () => {
    const batch = [{ jsonrpc: "2.0", id: 0, method: "initialize", params: {} }, ...Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }))];
    const res = await rpc(batch, { key: org.key, headers: { "mcp-protocol-version": "2024-11-05" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it("rejects a body that is not JSON with a JSON-RPC parse error", async () => {
    const res = await workerFetch(`${BASE}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{nope",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it("invalid JSON-RPC request objects are -32600 (not -32700); an empty batch is -32600, not 202", async () => {
    for (const body of [{ jsonrpc: "1.0", id: 1, method: "ping" }, { id: 1, method: "ping" }, { jsonrpc: "2.0", id: 1, method: 5 }, {}, []]) {
      const res = await rpc(body, { key: org.key });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await readRpc(res)) as { error: { code: number } }).error.code, JSON.stringify(body)).toBe(-32600);
    }
  });

  it("invalid params of protocol methods are -32602 with a readable message", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }, /protocolVersion/],
      [{ jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: 5 } }, /cursor/],
      [{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: 5 } }, /name/],
    ];
    for (const [body, re] of cases) {
      const reply = (await readRpc(await rpc(body, { key: org.key }))) as { id: number; error: { code: number; message: string } };
      expect(reply.id).toBe(body.id);
      expect(reply.error.code, JSON.stringify(body)).toBe(-32602);
      expect(reply.error.message).toMatch(re);
      expect(reply.error.message).not.toContain("\n");
    }
  });

  it("calling an unknown tool is a JSON-RPC -32602 error, not a tool result", async () => {
    const reply = (await readRpc(await rpc({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "no-such-tool", arguments: {} } }, { key: org.key }))) as {
      result?: unknown;
      error?: { code: number };
    };
    expect(reply.result).toBeUndefined();
    expect(reply.error?.code).toBe(-32602);
  });

  it("Accept: */* is accepted (both JSON and SSE are acceptable to it)", async () => {
    const res = await rpc({ jsonrpc: "2.0", id: 8, method: "ping" }, { key: org.key, headers: { accept: "*/*" } });
    expect(res.status).toBe(200);
    expect(((await readRpc(res)) as { id: number }).id).toBe(8);
  });

  it("a body over the limit is 413 with a JSON-RPC error", async () => {
    const res = await rpc({ jsonrpc: "2.0", id: 9, method: "ping", params: { _meta: { pad: "x".repeat(MCP_MAX_BODY_BYTES) } } }, { key: org.key });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32000);
  });

  it("GET with Accept: text/event-stream and DELETE are 405", async () => {
    const get = await workerFetch(`${BASE}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    const del = await workerFetch(`${BASE}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${org.key}` } });
    expect(del.status).toBe(405);
  });

  it("GET without SSE Accept returns public server info; browsers get a setup page", async () => {
    const info = await workerFetch(`${BASE}/mcp`, { headers: { accept: "application/json" } });
    expect(info.status).toBe(200);
    const body = (await info.json()) as {
      name: string;
      protocolVersion: string;
      tools: string[];
      transports: { streamableHttp: { url: string } };
      authentication: { oauth: { protectedResourceMetadata: string } };
    };
    expect(body.name).toBe("switchboard");
    expect(body.protocolVersion).toBe("2024-11-05");
    expect(body.tools).toHaveLength(8);
    expect(body.transports.streamableHttp.url).toBe(`${BASE}/mcp`);
    expect(body.authentication.oauth.protectedResourceMetadata).toBe(`${BASE}/.well-known/oauth-protected-resource`);
    const page = await workerFetch(`${BASE}/mcp`, { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain(`${BASE}/mcp`);
    expect(html).toMatch(/Cursor/);
    expect(html).toMatch(/Inspector/);
  });

  it("with PUBLIC_URL set, server info, setup page and 401 challenge name it, never the request's host", async () => {
    const publicEnv = Object.create(env, { PUBLIC_URL: { value: "https://gateway.example.com/", enumerable: true } }) as typeof env;
    const call = async (url: string, init?: RequestInit<IncomingRequestCfProperties>) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(url, init), publicEnv, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    const internal = "http://internal-host.test";
    const infoText = await (await call(`${internal}/mcp`, { headers: { accept: "application/json" } })).text();
    expect(infoText).not.toContain("internal-host.test");
    const info = JSON.parse(infoText) as {
      transports: { streamableHttp: { url: string }; sse: { url: string; messages: string } };
      authentication: { oauth: { protectedResourceMetadata: string; authorizationServerMetadata: string } };
    };
    expect(info.transports).toMatchObject({
      streamableHttp: { url: "https://gateway.example.com/mcp" },
      sse: { url: "https://gateway.example.com/sse", messages: "https://gateway.example.com/messages" },
    });
    expect(info.authentication.oauth.authorizationServerMetadata).toBe("https://gateway.example.com/.well-known/oauth-authorization-server");
    const page = await (await call(`${internal}/mcp`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain("https://gateway.example.com/mcp");
    expect(page).not.toContain("internal-host.test");

    // One resource metadata URL: what the info names is what a 401 challenge names, and it describes this /mcp.
    const refused = await call(`${internal}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initializeMessage()),
    });
    expect(refused.status).toBe(401);
    const challenged = /resource_metadata="([^"]+)"/.exec(refused.headers.get("www-authenticate") ?? "")?.[1];
    expect(challenged).toBe(info.authentication.oauth.protectedResourceMetadata);
    const meta = (await (await call(challenged!)).json()) as { resource: string };
    expect(meta.resource).toBe(info.transports.streamableHttp.url);
  });

  it("unauthorized requests get 401, a JSON-RPC error body and an RFC 9728 challenge", async () => {
    for (const key of [undefined, "swb_" + "x".repeat(40), "not-a-key"]) {
      const res = await rpc(initializeMessage(), { key });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource"`);
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.message).toBeTruthy();
    }
  });

  it("the challenge's resource_metadata URL serves RFC 9728 metadata for /mcp", async () => {
    const res = await rpc(initializeMessage());
    const url = /resource_metadata="([^"]+)"/.exec(res.headers.get("www-authenticate") ?? "")?.[1];
    expect(url).toBeDefined();
    const meta = await workerFetch(url!);
    expect(meta.status).toBe(200);
    const body = (await meta.json()) as { resource: string; authorization_servers: string[] };
    expect(body.resource).toBe(`${BASE}/mcp`);
    expect(body.authorization_servers.length).toBeGreaterThan(0);
  });

  it("x-api-key works like Authorization: Bearer", async () => {
    const client = await connectClient(org.key, { useXApiKey: true });
    const { tools } = await client.listTools();
    expect(tools.length).toBe(8);
    await client.close();
  });

  it("a disabled key is refused at once (401)", async () => {
    const extra = await import("../helpers/fixtures").then((f) => f.addKey(org, { description: "to disable" }));
    const before = await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: extra.token });
    expect(before.status).toBe(200);
    const db = getDb(env.DB);
    const [row] = await db.update(apiKeys).set({ status: "inactive", version: extra.row.version + 1 }).where(eq(apiKeys.id, extra.row.id)).returning();
    await syncKeys(env, [row!]);
    const after = await rpc({ jsonrpc: "2.0", id: 2, method: "ping" }, { key: extra.token });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("lists all eight tools with input and output schemas", async () => {
    const client = await connectClient(org.key);
    expect(client.getServerVersion()?.name).toBe("switchboard");
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(
      ["chat", "generate-image", "generate-nano-banana", "get-account", "get-usage", "get-usage-breakdown", "list-image-models", "list-models"].sort(),
    );
    for (const t of tools) expect(t.outputSchema, t.name).toBeDefined();
    const breakdown = tools.find((t) => t.name === "get-usage-breakdown")!;
    expect(breakdown.inputSchema.required).toEqual(["group_by"]);
    await client.close();
  });
});

/** Legacy HTTP+SSE transport, OAuth access tokens on /mcp, and the MCP rate limit. */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, oauthClients } from "../../src/db/schema";
import { syncKeys } from "../../src/keys/sync";
import { newId } from "../../src/lib/ids";
import { issueTokens } from "../../src/oauth/tokens";
import { BASE, connectClient, initializeMessage, rpc, workerFetch } from "./helpers";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

/** Reads SSE events from a stream until `count` events arrived (bounded by a deadline). */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next(deadlineMs = 5000): Promise<{ event: string; data: string }> {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        const sep = buffer.indexOf("\n\n");
        if (sep >= 0) {
          const raw = buffer.slice(0, sep);
          buffer = buffer.slice(sep + 2);
          if (raw.startsWith(":")) continue; // keepalive comment
          const event = /^event: (.*)$/m.exec(raw)?.[1] ?? "message";
          const data = raw
            .split("\n")
            .filter((l) => l.startsWith("data: "))
            .map((l) => l.slice(6))
            .join("\n");
          return { event, data };
        }
        if (Date.now() > deadline) throw new Error("no SSE event before the deadline");
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended");
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

const postMessage = (endpoint: string, key: string, message: unknown) =>
  workerFetch(`${BASE}${endpoint}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(message),
  });

describe("legacy HTTP+SSE transport", () => {
  it("round trip: endpoint event, POST /messages 202, replies on the stream", async () => {
    const res = await workerFetch(`${BASE}/sse`, { headers: { accept: "text/event-stream", authorization: `Bearer ${org.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = sseReader(res.body!);
    const first = await events.next();
    expect(first.event).toBe("endpoint");
    expect(first.data).toMatch(/^\/messages\?sessionId=[0-9a-f]{64}$/);

    const init = await postMessage(first.data, org.key, initializeMessage(1));
    expect(init.status).toBe(202);
    const initReply = JSON.parse((await events.next()).data) as { id: number; result: { protocolVersion: string } };
    expect(initReply.id).toBe(1);
    expect(initReply.result.protocolVersion).toBe("2024-11-05");

    expect((await postMessage(first.data, org.key, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    expect((await postMessage(first.data, org.key, { jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(202);
    const list = JSON.parse((await events.next()).data) as { id: number; result: { tools: Array<{ name: string }> } };
    expect(list.id).toBe(2);
    expect(list.result.tools).toHaveLength(8);

    const call = await postMessage(first.data, org.key, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list-image-models", arguments: {} } });
    expect(call.status).toBe(202);
    const result = JSON.parse((await events.next()).data) as { id: number; result: { structuredContent: { defaultModel: string } } };
    expect(result.id).toBe(3);
    expect(result.result.structuredContent.defaultModel).toBe("qwen-image-3.0");

    // Invalid params of a protocol method: -32602 on the stream, as on /mcp.
    expect((await postMessage(first.data, org.key, { jsonrpc: "2.0", id: 5, method: "tools/list", params: { cursor: 5 } })).status).toBe(202);
    const invalid = JSON.parse((await events.next()).data) as { id: number; error: { code: number; message: string } };
    expect(invalid).toMatchObject({ id: 5, error: { code: -32602 } });
    expect(invalid.error.message).toMatch(/cursor/);

    // Another key cannot post into this session.
    const other = await addKey(org, { description: "other" });
    const foreign = await postMessage(first.data, other.token, { jsonrpc: "2.0", id: 4, method: "ping" });
    expect(foreign.status).toBe(403);
    await events.cancel();
  });

  it("a session whose stream the client closed answers 404, not 202", async () => {
    const open = await workerFetch(`${BASE}/sse`, { headers: { accept: "text/event-stream", authorization: `Bearer ${org.key}` } });
    expect(open.status).toBe(200);
    const events = sseReader(open.body!);
    const endpoint = (await events.next()).data;
    expect((await postMessage(endpoint, org.key, { jsonrpc: "2.0", id: 1, method: "ping" })).status).toBe(202);
    await events.cancel();
    let status = 0;
    for (let i = 0; i < 40 && status !== 404; i++) {
      await new Promise((r) => setTimeout(r, 25));
      status = (await postMessage(endpoint, org.key, { jsonrpc: "2.0", id: 2, method: "ping" })).status;
    }
    expect(status).toBe(404);
  });

  it("checks auth on both endpoints; unknown sessions are 404", async () => {
    const open = await workerFetch(`${BASE}/sse`, { headers: { accept: "text/event-stream" } });
    expect(open.status).toBe(401);
    expect(open.headers.get("www-authenticate")).toContain("resource_metadata=");
    const post = await workerFetch(`${BASE}/messages?sessionId=${"a".repeat(64)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(post.status).toBe(401);
    const unknown = await postMessage(`/messages?sessionId=${"0".repeat(64)}`, org.key, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(unknown.status).toBe(404);
    const malformed = await postMessage(`/messages?sessionId=nope`, org.key, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(malformed.status).toBe(404);
  });
});

describe("OAuth access tokens", () => {
  it("an access token acts as its key; disabling the key stops the token", async () => {
    const key = await addKey(org, { description: "oauth key" });
    const clientId = newId("oc");
    await getDb(env.DB).insert(oauthClients).values({ id: clientId, name: "Test client", redirectUris: ["http://localhost/cb"], grantTypes: ["authorization_code"] });
    const tokens = await issueTokens(env, { clientId, apiKeyId: key.row.id, scope: "mcp", refresh: false });
    expect(tokens.access_token).not.toMatch(/^swb_/);

    const client = await connectClient(tokens.access_token);
    const account = (await client.callTool({ name: "get-account", arguments: {} })) as { structuredContent: Record<string, any> };
    expect(account.structuredContent.apiKey.id).toBe(key.row.id);
    expect(account.structuredContent.authentication).toEqual({ method: "oauth", oauthClientId: clientId });
    await client.close();

    const [row] = await getDb(env.DB).update(apiKeys).set({ status: "inactive", version: key.row.version + 1 }).where(eq(apiKeys.id, key.row.id)).returning();
    await syncKeys(env, [row!]);
    const refused = await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: tokens.access_token });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("an unknown access token is 401 with the challenge", async () => {
    const res = await rpc(initializeMessage(), { key: "swbo_at_" + "A".repeat(40) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="http:\/\/gw\.test\/\.well-known\/oauth-protected-resource"/);
  });
});

describe("rate limit (the account's limits, src/rate-limits/)", () => {
  it("every message of a JSON-RPC batch counts against the key's requests per minute; a batch larger than what is left is refused as a whole", async () => {
    await freshWindow();
    const key = await addKey(org, { description: "batcher", requestsPerMinute: 8 });
    const batch = Array.from({ length: 5 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }));
    const res = await rpc(batch, { key: key.token, headers: { "mcp-protocol-version": "2024-11-05" } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // 5 of 8 counted: another batch of 5 does not fit, three single calls do.
    const limited = await rpc(batch, { key: key.token, headers: { "mcp-protocol-version": "2024-11-05" } });
    expect(limited.status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: key.token })).status).toBe(200);
    expect((await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: key.token })).status).toBe(429);
  });

  it("over the key's limit: 429 with a JSON-RPC error and Retry-After", async () => {
    await freshWindow();
    const key = await addKey(org, { description: "busy", requestsPerMinute: 1 });
    const ok = await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: key.token });
    expect(ok.status).toBe(200);
    const limited = await rpc({ jsonrpc: "2.0", id: 2, method: "ping" }, { key: key.token });
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as { jsonrpc: string; error: { code: number; message: string; data: { code: string } } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toMatch(/Rate limit reached: this API key allows 1 requests per minute/);
    expect(body.error.data.code).toBe("rate_limit_exceeded");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

/** Tests that count within one window start at least 5 s before it ends. */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((r) => setTimeout(r, left + 20));
}

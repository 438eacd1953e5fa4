/**
 * Contract section 7: a POST whose Accept includes application/json gets one JSON body; a client
 * that accepts only text/event-stream gets the SSE stream.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { initializeMessage, rpc } from "./helpers";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

const v2024 = { "mcp-protocol-version": "2024-11-05" };

describe("MCP reply format (Accept)", () => {
  it("Accept naming both JSON and SSE gets one JSON body", async () => {
    const res = await rpc(initializeMessage(1), { key: org.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { jsonrpc: string; id: number; result: { serverInfo: { name: string } } };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "switchboard" } } });
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("Accept: application/json alone is accepted and answered with JSON (requests and tool calls)", async () => {
    const headers = { accept: "application/json", ...v2024 };
    const ping = await rpc({ jsonrpc: "2.0", id: 2, method: "ping" }, { key: org.key, headers });
    expect(ping.status).toBe(200);
    expect(ping.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await ping.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });

    const list = await rpc({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { key: org.key, headers });
    expect(list.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(8);

    const call = await rpc({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "get-account", arguments: {} } }, { key: org.key, headers });
    expect(call.status).toBe(200);
    expect(call.headers.get("content-type")).toMatch(/^application\/json/);
    const reply = (await call.json()) as { id: number; result: { isError?: boolean; structuredContent?: unknown } };
    expect(reply.id).toBe(4);
    expect(reply.result.isError ?? false).toBe(false);
    expect(reply.result.structuredContent).toBeDefined();
  });

  it("a batch gets one JSON array with a reply per request", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 10, method: "tools/list" },
      { jsonrpc: "2.0", id: 11, method: "ping" },
      { jsonrpc: "2.0", id: 12, method: "tools/call", params: { arguments: {} } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ];
    const res = await rpc(batch, { key: org.key, headers: { accept: "application/json", ...v2024 } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const replies = (await res.json()) as Array<{ id: number }>;
    expect(Array.isArray(replies)).toBe(true);
    expect(replies.map((r) => r.id).sort()).toEqual([10, 11, 12]);
  });

  it("Accept: */* and no Accept get JSON too", async () => {
    for (const accept of ["*/*", ""]) {
      const res = await rpc({ jsonrpc: "2.0", id: 5, method: "ping" }, { key: org.key, headers: { accept } });
      expect(res.status, accept).toBe(200);
      expect(res.headers.get("content-type"), accept).toMatch(/^application\/json/);
      expect(((await res.json()) as { id: number }).id).toBe(5);
    }
  });

  it("a client that accepts only text/event-stream keeps the SSE stream", async () => {
    const res = await rpc({ jsonrpc: "2.0", id: 6, method: "ping" }, { key: org.key, headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text).toMatch(/^event: message$/m);
    expect(text).toContain(`data: {"result":{},"jsonrpc":"2.0","id":6}`);
  });

  it("an Accept naming neither is 406 with a JSON-RPC error saying what to send", async () => {
    const res = await rpc({ jsonrpc: "2.0", id: 7, method: "ping" }, { key: org.key, headers: { accept: "text/html" } });
    expect(res.status).toBe(406);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.message).toMatch(/application\/json.*text\/event-stream/);
  });

  it("protocol errors stay JSON with their status", async () => {
    const res = await rpc({ jsonrpc: "2.0", id: 8, method: "tools/list" }, { key: org.key, headers: { accept: "application/json", "mcp-protocol-version": "2099-01-01" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
});

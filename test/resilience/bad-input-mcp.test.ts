/**
 * Bad input on MCP: random JSON values, JSON-RPC-shaped messages, Object.prototype names as
 * methods and sources, wrong tool arguments, parse errors and deep nesting get a JSON-RPC error
 * (or a result), never a 500 or a stack trace.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { callDirect as call, chatDirect as chat, expectNoStack, waitForLogs, type Json } from "./helpers";
import { readRpc } from "../mcp/helpers";
import { deepArray, deepObject, MODEL, RUNS, valid } from "./hostile-input";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ plan: "enterprise" });
});

describe("MCP: hostile JSON-RPC", { timeout: 60_000 }, () => {
  const rpcRaw = (body: string, key = org.key) =>
    call("/mcp", { method: "POST", key, body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } });

  async function expectRpcError(res: Response): Promise<void> {
    const text = await res.clone().text();
    expect(res.status, text.slice(0, 300)).toBeLessThan(500);
    expectNoStack(text);
    // Replies come as JSON or as a short SSE stream of `event: message` frames.
    const body = await readRpc<Json | Json[]>(res);
    const messages = Array.isArray(body) ? body : [body];
    for (const m of messages) {
      expect(m.jsonrpc).toBe("2.0");
      if (m.error) {
        expect(typeof m.error.code).toBe("number");
        expect(typeof m.error.message).toBe("string");
      } else {
        expect(m.result).toBeDefined();
      }
    }
  }

  it("random JSON values and random JSON-RPC-shaped messages get a JSON-RPC error, never a 500", async () => {
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.jsonValue()),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue()),
        method: fc.oneof(fc.constantFrom("initialize", "tools/call", "tools/list", "resources/read", "prompts/get", "ping", "../x"), fc.string({ maxLength: 20 }), fc.jsonValue()),
        params: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: ["jsonrpc", "method"] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue({ maxDepth: 3 }), message), async (value) => {
        const res = await rpcRaw(JSON.stringify(value));
        if (res.status === 202) return; // a notification (no id) is acknowledged without a body
        await expectRpcError(res);
      }),
      RUNS,
    );
  });

  it("an x-source named after an Object.prototype member is a custom app name, logged as sent", async () => {
    const names = ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"];
    const ids: string[] = [];
    for (const name of names) {
      const res = await chat(org.key, valid(), { "x-source": name });
      expect(res.status, name).toBe(200);
      ids.push(res.headers.get("x-request-id")!);
    }
    const rows = await waitForLogs(ids);
    expect(ids.map((id) => rows.find((r) => r.requestId === id)?.sourceApp)).toEqual(names);
  });

  it("methods named after Object.prototype members are unknown methods, not a 500", async () => {
    // Found by the property above (seed -1021276400): `valueOf` reached an inherited function.
    for (const method of Object.getOwnPropertyNames(Object.prototype)) {
      for (const id of [1, ""]) await expectRpcError(await rpcRaw(JSON.stringify({ jsonrpc: "2.0", id, method })));
      const batch = await rpcRaw(JSON.stringify([{ jsonrpc: "2.0", id: 1, method }, { jsonrpc: "2.0", id: 2, method: "ping" }]));
      await expectRpcError(batch);
    }
  });

  it("tool calls with wrong argument types are JSON-RPC or tool errors", async () => {
    for (const [name, args] of [
      ["chat", { model: 123, messages: "x" }],
      ["chat", { model: "../..", messages: [{ role: "user", content: "x" }] }],
      ["chat", { model: MODEL, messages: [{ role: "user", content: deepArray(2000) }] }],
      ["list-models", { limit: -1, provider: {} }],
      ["get-usage", { from: "yesterday", to: 42 }],
      ["nope", {}],
      ["generate-image", { prompt: null }],
    ] as const) {
      const res = await rpcRaw(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } }));
      await expectRpcError(res);
    }
  });

  it("parse errors, deep nesting and garbage", async () => {
    for (const body of ["{", "", "null", deepArray(10_000), deepObject(10_000), "[]", "[1,2,3]", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + deepObject(10_000) + "}"]) {
      const res = await rpcRaw(body);
      if (res.status === 202) continue;
      await expectRpcError(res);
    }
  });
});

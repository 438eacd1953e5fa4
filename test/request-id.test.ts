import { describe, expect, it } from "vitest";
import { call, seedOrg } from "./helpers/fixtures";

describe("x-request-id on every response (contract section 6)", () => {
  it("is set by JSON routes, raw-Response routes, errors and unknown routes alike", async () => {
    const org = await seedOrg();
    const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const responses = await Promise.all([
      call("/"),
      call("/v1/models"),
      call("/v1/nope"),
      call("/v1/chat/completions", { method: "POST", key: org.key, body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }) }),
      call("/v1/chat/completions", { method: "POST", key: org.key, body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "hi" }] }) }),
      call("/v1/chat/completions", { method: "POST", body: "{}" }),
      call("/mcp", { method: "POST", key: org.key, headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) }),
      call("/mcp", { method: "POST", headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }),
      call("/mcp", { method: "DELETE" }),
      call("/.well-known/oauth-authorization-server"),
      call("/v1/videos/logs/log_missing/content", { key: org.key }),
      call("/v1/master/projects", { key: org.masterKey }),
    ]);
    const paths = ["/", "/v1/models", "/v1/nope", "chat", "chat stream", "chat no key", "mcp initialize", "mcp no key", "mcp DELETE", "oauth metadata", "video content", "master projects"];
    const missing: string[] = [];
    for (const [i, res] of responses.entries()) {
      await res.arrayBuffer();
      if (!/^req_[A-Za-z0-9]{20}$/.test(res.headers.get("x-request-id") ?? "")) missing.push(`${paths[i]} (${res.status})`);
    }
    expect(missing).toEqual([]);
  });
});

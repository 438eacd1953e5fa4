import { describe, expect, it } from "vitest";
import { invalidParams, invalidParamsReply } from "./protocol";

describe("invalidParams", () => {
  it("finds params that do not fit a protocol method, with one readable line", () => {
    const bad = invalidParams({ jsonrpc: "2.0", id: 3, method: "initialize", params: {} });
    expect(bad?.id).toBe(3);
    expect(bad?.message).toMatch(/^Invalid params for initialize: 'params\.protocolVersion': /);
    expect(bad?.message).not.toContain("\n");
    expect(invalidParamsReply(bad!)).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: bad!.message } });
    expect(invalidParams({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: 5 } })?.message).toMatch(/name/);
  });

  it("leaves valid requests, notifications, unknown methods and non-requests to the SDK", () => {
    expect(invalidParams({ jsonrpc: "2.0", id: 1, method: "ping" })).toBeNull();
    expect(invalidParams({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "chat", arguments: {} } })).toBeNull();
    expect(invalidParams({ jsonrpc: "2.0", method: "initialize", params: {} })).toBeNull();
    expect(invalidParams({ jsonrpc: "2.0", id: 1, method: "resources/list", params: 5 })).toBeNull();
    expect(invalidParams([{ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }])).toBeNull();
  });
});

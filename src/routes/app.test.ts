import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const call = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://gw.test${path}`, init));

describe("HTTP surface", () => {
  it("answers unknown routes with the 404 envelope and a request id", async () => {
    const res = await call("/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      error: { message: "No route for GET /v1/nope", type: "not_found_error", param: null, code: "route_not_found" },
    });
  });

  it("rejects a JSON API body with the wrong content type", async () => {
    const res = await call("/v1/chat/completions", { method: "POST", body: "hello", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unsupported_content_type");
  });

  it("rejects oversized bodies with 413", async () => {
    const res = await call("/v1/chat/completions", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json", "content-length": String(11 * 1024 * 1024) },
    });
    expect(res.status).toBe(413);
  });
});

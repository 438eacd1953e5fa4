/**
 * CORS on the gateway API costs no copy of the answer: a route's own Response goes out as it is,
 * with the two headers set on it (Hono's `cors()` set them on a placeholder Response before the
 * route ran, and every route's Response was then copied over that placeholder).
 */
import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { gatewayCors } from "./cors";

function appWith(answer: () => Response): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/v1/*", gatewayCors);
  app.post("/v1/chat/completions", () => answer());
  app.get("/v1/master/organization", () => answer());
  return app;
}

describe("gateway CORS", () => {
  it("a route's own Response is the answer, with Access-Control-Allow-Origin and the exposed headers set on it", async () => {
    let made: Response | null = null;
    const app = appWith(() => (made = new Response("{}", { headers: { "content-type": "application/json", "x-request-id": "req_1" } })));
    const res = await app.request("/v1/chat/completions", { method: "POST", headers: { origin: "https://app.example" } });
    expect(res).toBe(made);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toBe("x-request-id,retry-after,x-ratelimit-limit,x-ratelimit-remaining,x-ratelimit-reset");
    expect(res.headers.get("x-request-id")).toBe("req_1");
  });

  it("an answer with immutable headers (a fetched response passed through) is copied once and gets them too", async () => {
    const fetched = Response.redirect("https://example.test/", 302);
    const res = await appWith(() => fetched).request("/v1/chat/completions", { method: "POST" });
    expect(res.status).toBe(302);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("a preflight is answered 204 with the methods and the requested headers; the master API gets none", async () => {
    const app = appWith(() => new Response("{}"));
    const pre = await app.request("/v1/chat/completions", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("authorization,content-type");
    const master = await app.request("/v1/master/organization", { headers: { origin: "https://app.example" } });
    expect(master.headers.get("access-control-allow-origin")).toBeNull();
  });
});

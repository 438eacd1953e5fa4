import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import { assertSameOrigin } from "./csrf";

const app = new Hono().post("/x", (c) => {
  try {
    assertSameOrigin(c);
    return c.text("ok");
  } catch {
    return c.text("refused", 403);
  }
});
const post = (headers: Record<string, string>) => app.request("https://gw.test/x", { method: "POST", headers });

describe("assertSameOrigin", () => {
  it("accepts the own origin and refuses another", async () => {
    expect((await post({ origin: "https://gw.test" })).status).toBe(200);
    expect((await post({ origin: "https://evil.test" })).status).toBe(403);
  });

  it("accepts `Origin: null` from a same-origin form (no-referrer pages), refuses it otherwise", async () => {
    expect((await post({ origin: "null", "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await post({ origin: "null", "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await post({ origin: "null" })).status).toBe(403);
  });

  it("without Origin, refuses only a cross-site fetch", async () => {
    expect((await post({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await post({})).status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { onError } from "../../errors/on-error";
import { readJsonBody } from "./json-body";

/** A route that reads its body and says what Hono still keeps of it. */
function app() {
  const a = new Hono<AppEnv>();
  a.post("/", async (c) => {
    const body = await readJsonBody(c);
    return c.json({ body, kept: Object.keys(c.req.bodyCache) });
  });
  a.onError(onError);
  return a;
}

describe("readJsonBody", () => {
  it("parses the body and lets Hono's copy of its text go", async () => {
    const res = await app().request("/", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ messages: ["x".repeat(200_000)] }) });
    expect(res.status).toBe(200);
    const out = (await res.json()) as { body: { messages: string[] }; kept: string[] };
    expect(out.body.messages[0]).toHaveLength(200_000);
    expect(out.kept).toEqual([]);
  });

  it("answers a body that is not JSON with the 400 envelope", async () => {
    const res = await app().request("/", { method: "POST", headers: { "content-type": "application/json" }, body: '{"model": ' });
    expect(res.status).toBe(400);
    const out = (await res.json()) as { error: { code: string; message: string } };
    expect(out.error.code).toBe("invalid_json");
    expect(out.error.message).toMatch(/not valid JSON/);
  });
});

/**
 * The gateway key in `x-api-key` instead of `Authorization: Bearer` (contract section 6: on `/mcp`
 * and every `/v1/*` route that takes a gateway key), as Anthropic-style clients send it: each door
 * answers as with the bearer header, rate-limit headers included.
 */
import { describe, expect, it } from "vitest";
import { call, seedOrg } from "./helpers/fixtures";

describe("x-api-key on the /v1 doors", () => {
  it("authenticates chat, Responses, Messages, embeddings, moderations, images and the catalogue", async () => {
    const org = await seedOrg();
    const doors: Array<[string, unknown]> = [
      ["/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }],
      ["/v1/responses", { model: "gpt-4o-mini", input: "hi" }],
      ["/v1/messages", { model: "gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }],
      ["/v1/messages/count_tokens", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }],
      ["/v1/embeddings", { model: "text-embedding-3-small", input: "hi" }],
      ["/v1/moderations", { input: "hi" }],
      ["/v1/images/generations", { model: "gpt-image-1", prompt: "a cat" }],
      ["/v1/models/gpt-4o-mini", undefined],
    ];
    const wrong: string[] = [];
    for (const [path, body] of doors) {
      const init: RequestInit = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) };
      const res = await call(path, { ...init, headers: { "x-api-key": org.key, "content-type": "application/json" } });
      await res.arrayBuffer();
      if (res.status !== 200 || !res.headers.get("x-ratelimit-limit")) wrong.push(`${path} ${res.status} ${res.headers.get("x-ratelimit-limit")}`);
    }
    expect(wrong).toEqual([]);
    // A wrong key in x-api-key is refused like a wrong bearer.
    const bad = await call("/v1/chat/completions", { method: "POST", headers: { "x-api-key": "swb_" + "x".repeat(40), "content-type": "application/json" }, body: JSON.stringify(doors[0]![1]) });
    expect(bad.status).toBe(401);
  });
});

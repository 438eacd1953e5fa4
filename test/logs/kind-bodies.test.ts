/**
 * Kept bodies beyond chat: embeddings, image generations and moderations of a project with
 * `logBodies` keep their request and answer like chat (same cap, secrets removed), with vectors as
 * their dimensions and images as short references instead of base64; the record says they were
 * kept (the Requests page's filter, the span event).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { waitForLog } from "../chat/helpers";
import { compactBody } from "../../src/usage/body-shapes";

type Json = Record<string, any>;
let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
  const res = await call(`/v1/master/projects/${org.projectId}`, { method: "PATCH", key: org.masterKey, ...json({ logBodies: true }) });
  expect(res.status).toBe(200);
});

async function recordOf(requestId: string, timeoutMs = 8000): Promise<Json> {
  await waitForLog(requestId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = (await (await call(`/v1/master/logs/${requestId}`, { key: org.masterKey })).json()) as Json;
    if ("responseBody" in r || Date.now() > deadline) return r;
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

describe("bodies of embeddings, images and moderations", () => {
  it("embeddings: the input, and each vector as its dimensions", async () => {
    const res = await call("/v1/embeddings", { method: "POST", key: org.key, ...json({ model: "text-embedding-3-small", input: ["hello there", "my key sk-abcdefghijklmnopqrstuvwxyz0123456789"], encoding_format: "float" }) });
    expect(res.status).toBe(200);
    const sent = (await res.json()) as Json;
    const r = await recordOf(res.headers.get("x-request-id")!);
    expect(r.extra).toMatchObject({ bodies: true });
    expect(r.requestBody.input[0]).toBe("hello there");
    expect(JSON.stringify(r.requestBody)).not.toContain("sk-abcdefghij");
    expect(r.responseBody.data).toEqual(sent.data.map((d: Json, index: number) => ({ index, embedding: { dimensions: d.embedding.length } })));
    expect(r.responseBody.usage.prompt_tokens).toBe(sent.usage.prompt_tokens);
  });

  it("images: the prompt, and each image as a reference with its size, not its base64", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "a red fox", model: "gpt-image-1", n: 1 }) });
    expect(res.status).toBe(200);
    const sent = (await res.json()) as Json;
    const r = await recordOf(res.headers.get("x-request-id")!);
    expect(r.extra).toMatchObject({ bodies: true });
    expect(r.requestBody).toMatchObject({ prompt: "a red fox", model: "gpt-image-1" });
    const b64 = sent.data[0].b64_json as string;
    expect(b64.length).toBeGreaterThan(0);
    expect(r.responseBody.data[0].b64_json).toMatch(/^\[image omitted: \d+ bytes\]$/);
    expect(JSON.stringify(r.responseBody)).not.toContain(b64.slice(0, 40));
  });

  it("moderations: the input and the results", async () => {
    const res = await call("/v1/moderations", { method: "POST", key: org.key, ...json({ model: "omni-moderation-latest", input: "is this fine?" }) });
    expect(res.status).toBe(200);
    const sent = (await res.json()) as Json;
    const r = await recordOf(res.headers.get("x-request-id")!);
    expect(r.extra).toMatchObject({ bodies: true });
    expect(r.requestBody.input).toBe("is this fine?");
    expect(r.responseBody.results).toEqual(sent.results);
  });

  it("a refused request keeps its error as the answer", async () => {
    const res = await call("/v1/embeddings", { method: "POST", key: org.key, ...json({ model: "no-such-embedding-model", input: "x" }) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const r = await recordOf(res.headers.get("x-request-id")!);
    expect(r.responseBody.error.status).toBe(res.status);
  });

  it("data URLs and long base64 strings become references; short text stays", () => {
    const png = `data:image/png;base64,${"A".repeat(4000)}`;
    expect(compactBody({ input: [{ type: "image_url", image_url: { url: png } }, { type: "text", text: "hi" }] })).toEqual({
      input: [{ type: "image_url", image_url: { url: "[image/png omitted: 3000 bytes]" } }, { type: "text", text: "hi" }],
    });
    expect(compactBody({ image: "QUJD".repeat(1000) })).toEqual({ image: "[base64 omitted: 3000 bytes]" });
    expect(compactBody({ url: "https://example.test/a.png" })).toEqual({ url: "https://example.test/a.png" });
  });
});

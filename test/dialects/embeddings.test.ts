/** `POST /v1/embeddings` through the official `openai` client, unmodified. */
import { beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { exports } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { waitForLog } from "../chat/helpers";
import { recorded } from "../helpers/recorded";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

const client = () =>
  new OpenAI({ baseURL: "http://gw.test/v1", apiKey: org.key, maxRetries: 0, fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)) });
describe("POST /v1/embeddings", () => {
  it("embeddings.create (the SDK asks for base64 and decodes it) on an OpenAI model, priced and logged", async () => {
    const r = await client().embeddings.create({ model: "text-embedding-3-small", input: ["one two three [[tag:emb-openai]]", "four"], dimensions: 4 });
    expect(r.data).toHaveLength(2);
    expect(r.data[0]!.embedding).toHaveLength(4);
    expect(r.data[1]!.index).toBe(1);
    expect(r.usage.prompt_tokens).toBe(5);
    const sent = await recorded("emb-openai");
    expect(sent[0]!.path).toBe("/embeddings");
    expect(sent[0]!.body).toMatchObject({ model: "text-embedding-3-small", dimensions: 4, encoding_format: "float" });
  });

  it("floats on request, cost in usage, a log row of kind embedding with the cost", async () => {
    const res = await call("/v1/embeddings", { method: "POST", key: org.key, ...json({ model: "text-embedding-3-small", input: "hello embeddings", encoding_format: "float" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ embedding: number[] }>; usage: { prompt_tokens: number; cost: number } };
    expect(Array.isArray(body.data[0]!.embedding)).toBe(true);
    expect(body.usage.cost).toBeCloseTo(2 * 0.02e-6, 12);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.kind).toBe("embedding");
    expect(log.usedProvider).toBe("openai");
    expect(log.costPico).toBe(2 * 20_000);
  });

  it("routes a Gemini embedding model to batchEmbedContents", async () => {
    const r = await client().embeddings.create({ model: "gemini-embedding-001", input: ["a b [[tag:emb-gemini]]", "c"], dimensions: 6 });
    expect(r.data.map((d) => d.embedding.length)).toEqual([6, 6]);
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
    const sent = await recorded("emb-gemini");
    expect(sent[0]!.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect((sent[0]!.body.requests as unknown[]).length).toBe(2);
  });

  it("refuses chat models, unknown models and bad input with 400 naming the field; upstream failures are 502", async () => {
    await expect(client().embeddings.create({ model: "gpt-4o-mini", input: "x" })).rejects.toMatchObject({ status: 400, param: "model" });
    await expect(client().embeddings.create({ model: "nope", input: "x" })).rejects.toMatchObject({ status: 400, param: "model" });
    const bad = await call("/v1/embeddings", { method: "POST", key: org.key, ...json({ model: "text-embedding-3-small", input: [] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("input");
    await expect(client().embeddings.create({ model: "text-embedding-3-small", input: "x [[fake:status=500]]" })).rejects.toMatchObject({ status: 502 });
  });
});

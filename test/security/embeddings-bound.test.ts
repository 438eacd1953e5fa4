/**
 * Embeddings admission reserves a true upper bound (UTF-8 bytes of every input,
 * as chat prompts), not characters / 4. Text whose tokens are shorter than four characters (here
 * 2,000 one-letter words in 4,000 characters: 2,000 tokens, as real tokenizers count them too)
 * made reservations half the real cost, and a burst overspent a key's limit about 2x.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, seedOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { settledSpend } from "../resilience/helpers";
import { embeddingTokensUpperBound } from "../../src/billing/estimate";

/** text-embedding-3-small: $0.02 per million tokens. */
const TOKEN_PICO = 20_000n;
const WORDS = 2_000;
const ONE_REQUEST = BigInt(WORDS) * TOKEN_PICO; // the fake bills one token per word
const LIMIT = 10n * ONE_REQUEST;

const embed = (key: string, i: number) =>
  call("/v1/embeddings", {
    method: "POST",
    key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "text-embedding-3-small", input: `${i} ${"a ".repeat(WORDS - 1)}`.trim() }),
  });

describe("embeddings admission", () => {
  it("60 concurrent embeddings cannot overspend a key's limit by more than one request", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: (Number(LIMIT) / 1e12).toFixed(12) });
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => embed(token, i)));
    const statuses = await Promise.all(results.map(async (r) => (await r.text(), r.status)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 401 || s === 429), statuses.join(",")).toBe(true);
    const { usage, logged, rows } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    expect(rows.filter((r) => r.statusCode === 200).every((r) => BigInt(r.costPico) === ONE_REQUEST)).toBe(true);
    expect(usage).toBeLessThanOrEqual(LIMIT + ONE_REQUEST);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });

  it("the bound counts bytes (multi-byte text too), token lists by length, and never less than a tokenizer can bill", () => {
    expect(embeddingTokensUpperBound(["a a a a"])).toBeGreaterThanOrEqual(7);
    expect(embeddingTokensUpperBound(["日本語"])).toBeGreaterThanOrEqual(9);
    expect(embeddingTokensUpperBound([[1, 2, 3]])).toBeGreaterThanOrEqual(3);
    expect(embeddingTokensUpperBound(["x", "y"])).toBeGreaterThan(embeddingTokensUpperBound(["x"]));
  });
});

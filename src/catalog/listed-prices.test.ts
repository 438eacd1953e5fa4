/** The prices `GET /v1/models` lists are the prices `computeCost` bills, for every mapping and every kind of token. */
import { describe, expect, it } from "vitest";
import { computeCost } from "../billing/cost";
import { parseUsd } from "../billing/money";
import { emptyUsage, type NormalizedUsage } from "../providers/types";
import { findModel, listModels } from "./index";
import { serializeMapping } from "./serialize";

/** Tokens of one kind: below every prompt-size tier threshold, where the listed base prices apply. */
const MILLION = 100_000;

/** A batch of tokens of one kind, inside the totals they belong to. */
const KINDS: Array<[string, (u: NormalizedUsage) => void]> = [
  ["input_cache_read", (u) => ((u.promptTokens = MILLION), (u.cachedTokens = MILLION))],
  ["input_cache_write", (u) => ((u.promptTokens = MILLION), (u.cacheWrite5mTokens = MILLION))],
  ["input_cache_write_1h", (u) => ((u.promptTokens = MILLION), (u.cacheWrite1hTokens = MILLION))],
  ["input_audio", (u) => ((u.promptTokens = MILLION), (u.audioInputTokens = MILLION))],
  ["image", (u) => ((u.promptTokens = MILLION), (u.imageInputTokens = MILLION))],
  ["internal_reasoning", (u) => ((u.completionTokens = MILLION), (u.reasoningTokens = MILLION))],
  ["output_audio", (u) => ((u.completionTokens = MILLION), (u.audioOutputTokens = MILLION))],
  ["image_output", (u) => ((u.completionTokens = MILLION), (u.imageOutputTokens = MILLION))],
];

describe("listed prices agree with billed prices", () => {
  it("every mapping lists each token price at what a million such tokens are billed", () => {
    for (const model of listModels()) {
      for (const m of model.mappings) {
        const listed = serializeMapping(model, m).pricing;
        const request = parseUsd(listed.request);
        for (const [field, fill] of KINDS) {
          const usage = emptyUsage();
          fill(usage);
          const billed = computeCost(usage, m.pricing).total - request;
          const price = parseUsd((listed as unknown as Record<string, string>)[field]!);
          expect(billed, `${m.providerId}/${model.id} ${field}`).toBe(price * BigInt(MILLION));
        }
      }
    }
  });

  it("a mapping without a cache-read price lists the prompt price its cached tokens are billed at (not 0)", () => {
    const model = findModel("llama-3.1-70b-instruct")!;
    const m = model.mappings.find((x) => x.providerId === "groq")!;
    expect(m.pricing.input_cache_read).toBeUndefined();
    const listed = serializeMapping(model, m).pricing;
    expect(listed.input_cache_read).toBe(m.pricing.prompt);
    // 128 cached of 171 prompt tokens: what the listing says is what is billed.
    const usage = { ...emptyUsage(), promptTokens: 171, cachedTokens: 128 };
    const fromListing = 43n * parseUsd(listed.prompt) + 128n * parseUsd(listed.input_cache_read);
    expect(computeCost(usage, m.pricing).total).toBe(fromListing);
    // A model without reasoning lists reasoning at the completion price it would be billed at.
    expect(serializeMapping(model, m).pricing.internal_reasoning).toBe(m.pricing.completion);
  });
});

import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../providers/types";
import { estimatePromptTokens, estimateUpperBound, promptTokensUpperBound, tokensUpperBound } from "./estimate";

const req = (over: Partial<ChatRequest>): ChatRequest => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...over }) as ChatRequest;
const target = { pricing: { prompt: "0.000001", completion: "0.000002" }, maxOutput: 1000, contextLength: 100_000 };

describe("promptTokensUpperBound", () => {
  it("never counts fewer tokens than bytes of text (one-letter words beat chars / 4)", () => {
    const content = Array.from({ length: 300 }, () => "a").join(" ");
    const r = req({ messages: [{ role: "user", content }] });
    expect(promptTokensUpperBound(r)).toBeGreaterThanOrEqual(content.length);
    expect(promptTokensUpperBound(r)).toBeGreaterThan(2 * estimatePromptTokens(r));
  });

  it("counts UTF-8 bytes, per-message and per-tool overheads, and images", () => {
    const emoji = req({ messages: [{ role: "user", content: "😀😀" }] });
    expect(promptTokensUpperBound(emoji)).toBeGreaterThanOrEqual(8);
    const many = req({ messages: Array.from({ length: 10 }, () => ({ role: "user" as const, content: "" })) });
    expect(promptTokensUpperBound(many)).toBeGreaterThanOrEqual(80);
    const tools = req({ tools: [{ type: "function", function: { name: "f" } }] });
    expect(promptTokensUpperBound(tools)).toBeGreaterThan(promptTokensUpperBound(req({})) + 16);
    const image = req({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] });
    expect(promptTokensUpperBound(image)).toBeGreaterThanOrEqual(2_500);
  });

  it("counts signed thinking sent back to the upstream (reasoning_details)", () => {
    const text = "t".repeat(4000);
    const turn = (reasoning_details?: ChatRequest["messages"][number] & { role: "assistant" }) => req({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a", ...reasoning_details }] });
    const signed = turn({ role: "assistant", reasoning_details: [{ type: "reasoning.text", text, signature: "s".repeat(500) }] });
    expect(promptTokensUpperBound(signed)).toBeGreaterThanOrEqual(promptTokensUpperBound(turn()) + 4500);
    expect(estimatePromptTokens(signed)).toBeGreaterThanOrEqual(estimatePromptTokens(turn()) + 1000);
  });

  it("reads a request's prompt once, however many bounds admission asks of it", () => {
    let reads = 0;
    const messages = [{ role: "user" as const, content: "x".repeat(100_000) }];
    const r = req({});
    Object.defineProperty(r, "messages", { get: () => (reads++, messages) });
    const first = promptTokensUpperBound(r);
    estimateUpperBound(r, [target]);
    tokensUpperBound(r, [target]);
    expect(promptTokensUpperBound(r)).toBe(first);
    expect(reads).toBe(1);
    // Another request (a fallback model's copy) is its own object: read on its own.
    expect(promptTokensUpperBound({ ...r, messages: [{ role: "user", content: "hi" }] })).toBeLessThan(first);
  });
});

describe("estimateUpperBound", () => {
  it("bounds completion by max_tokens, else the mapping's maximum output, times n", () => {
    const base = estimateUpperBound(req({}), [target]);
    expect(estimateUpperBound(req({ max_tokens: 10 }), [target])).toBeLessThan(base);
    expect(estimateUpperBound(req({ max_tokens: 10, n: 3 }), [target]) - estimateUpperBound(req({ max_tokens: 10 }), [target])).toBe(2n * 10n * 2_000_000n);
  });

  it("uses the dearest input and output prices and caps the prompt at the context length", () => {
    const dear = { ...target, pricing: { ...target.pricing, internal_reasoning: "0.00001" } };
    expect(estimateUpperBound(req({ max_tokens: 10 }), [dear])).toBeGreaterThan(estimateUpperBound(req({ max_tokens: 10 }), [target]));
    const small = { ...target, contextLength: 5 };
    expect(estimateUpperBound(req({ max_tokens: 1, messages: [{ role: "user", content: "x".repeat(1000) }] }), [small])).toBe(5n * 1_000_000n + 2_000_000n);
  });
});

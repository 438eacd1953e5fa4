import { describe, expect, it } from "vitest";
import { emptyUsage } from "./types";
import { CompletionAccumulator } from "./accumulate";

describe("CompletionAccumulator", () => {
  it("folds deltas, tool call pieces, finish and the last usage into a completion", () => {
    const acc = new CompletionAccumulator();
    acc.push({ type: "delta", choiceIndex: 0, delta: { role: "assistant" } });
    acc.push({ type: "delta", choiceIndex: 0, delta: { reasoning: "a" } });
    acc.push({ type: "delta", choiceIndex: 0, delta: { reasoning: "b", content: "Hi" } });
    acc.push({ type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: 1, id: "c2", type: "function", function: { name: "g", arguments: "" } }] } });
    acc.push({ type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: '{"x"' } }] } });
    acc.push({ type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ":1}" } }, { index: 1, function: { arguments: "{}" } }] } });
    acc.push({ type: "usage", usage: { ...emptyUsage(), promptTokens: 1 } });
    expect(acc.finished).toBe(false);
    acc.push({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    acc.push({ type: "usage", usage: { ...emptyUsage(), promptTokens: 5, completionTokens: 2 } });
    expect(acc.finished).toBe(true);
    expect(acc.result()).toEqual({
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: "Hi",
          reasoning: "ab",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "f", arguments: '{"x":1}' } },
            { id: "c2", type: "function", function: { name: "g", arguments: "{}" } },
          ],
        },
      }],
      usage: { ...emptyUsage(), promptTokens: 5, completionTokens: 2 },
    });
  });

  it("keeps the first error and reports unfinished streams", () => {
    const acc = new CompletionAccumulator();
    acc.push({ type: "delta", choiceIndex: 0, delta: { content: "partial" } });
    acc.push({ type: "error", message: "boom", errorType: "server_error", status: 500 });
    acc.push({ type: "error", message: "second", errorType: "x" });
    expect(acc.error).toEqual({ message: "boom", errorType: "server_error", status: 500 });
    expect(acc.finished).toBe(false);
    expect(acc.hasUsage).toBe(false);
    expect(acc.result().choices[0]).toEqual({ index: 0, message: { role: "assistant", content: "partial" }, finish_reason: null });
  });
});

import { describe, expect, it } from "vitest";
import { mapFinishReason } from "./finish-reason";

describe("finish reason mapping", () => {
  it.each([
    ["openai", "stop", "stop"],
    ["openai", "length", "length"],
    ["openai", "tool_calls", "tool_calls"],
    ["openai", "function_call", "tool_calls"],
    ["openai", "content_filter", "content_filter"],
    ["anthropic", "end_turn", "stop"],
    ["anthropic", "stop_sequence", "stop"],
    ["anthropic", "max_tokens", "length"],
    ["anthropic", "tool_use", "tool_calls"],
    ["anthropic", "refusal", "content_filter"],
    ["google", "STOP", "stop"],
    ["google", "MAX_TOKENS", "length"],
    ["google", "SAFETY", "content_filter"],
    ["google", "RECITATION", "content_filter"],
    ["google", "MALFORMED_FUNCTION_CALL", "error"],
    ["bedrock", "end_turn", "stop"],
    ["bedrock", "max_tokens", "length"],
    ["bedrock", "tool_use", "tool_calls"],
    ["bedrock", "guardrail_intervened", "content_filter"],
    ["bedrock", "content_filtered", "content_filter"],
    ["azure", "content_filter", "content_filter"],
  ] as const)("%s %s -> %s", (format, raw, expected) => {
    expect(mapFinishReason(format, raw)).toBe(expected);
  });

  it("keeps absent reasons null and unknown reasons as stop", () => {
    expect(mapFinishReason("openai", null)).toBeNull();
    expect(mapFinishReason("anthropic", undefined)).toBeNull();
    expect(mapFinishReason("google", "")).toBeNull();
    expect(mapFinishReason("bedrock", "something_new")).toBe("stop");
  });

  it("maps reasons named after Object.prototype members to stop, in every format", () => {
    for (const format of ["openai", "azure", "anthropic", "google", "bedrock"] as const) {
      for (const raw of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty", "isPrototypeOf"]) {
        expect(mapFinishReason(format, raw), `${format} ${raw}`).toBe("stop");
      }
    }
  });
});

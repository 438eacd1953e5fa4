/**
 * Gemini and Bedrock Converse answers as the APIs document them, fed to the gateway exactly (fake
 * upstream replay), streamed and not: Gemini's `thought` parts, function calls without
 * arguments, code execution parts; Bedrock's tool calls without input deltas, reasoning and
 * citations; and parts or blocks the gateway cannot translate.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics } from "../chat/helpers";
import { replay, viaChat, viaMessages, viaResponses, type Replay } from "./replay";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const GEMINI = "google-ai-studio/gemini-2.5-flash";
const BEDROCK = "aws-bedrock/claude-sonnet-4";
const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 20, thoughtsTokenCount: 5, totalTokenCount: 35 };
const gemini = (parts: unknown[], finishReason?: string) => ({ candidates: [{ index: 0, content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}) }], usageMetadata, modelVersion: "gemini-2.5-flash" });
/** The same parts streamed (one frame each, the finish on the last) and whole. */
const geminiBoth = (parts: unknown[], finishReason = "STOP"): [Replay, Replay] => [
  { sse: parts.map((p, i) => ({ data: gemini([p], i === parts.length - 1 ? finishReason : undefined) })) },
  { json: gemini(parts, finishReason) },
];

describe("Gemini parts", () => {
  it("thought parts are reasoning, text parts the answer (a thoughtSignature on a text part is kept out of it)", async () => {
    const [s, j] = geminiBoth([{ text: "Adding.", thought: true }, { text: "2 + 2 = 4", thoughtSignature: "c2ln" }]);
    for (const [stream, r] of [[true, s], [false, j]] as const) {
      const a = await viaChat(org.key, GEMINI, await replay(r), stream);
      expect(a.text, a.body).toBe("2 + 2 = 4");
      expect(a.reasoning).toBe("Adding.");
    }
  });

  it("a functionCall without args (or with empty args) carries `{}` through every front door", async () => {
    for (const call of [{ name: "rollDie" }, { name: "rollDie", args: {} }]) {
      const [s, j] = geminiBoth([{ functionCall: call }]);
      for (const [door, via] of [["chat", viaChat], ["messages", viaMessages], ["responses", viaResponses]] as const) {
        for (const [stream, r] of [[true, s], [false, j]] as const) {
          const a = await via(org.key, GEMINI, await replay(r), stream);
          expect(a.tools, `${door} stream=${stream}: ${a.body}`).toEqual([{ name: "rollDie", arguments: "{}" }]);
        }
      }
    }
  });

  it("code execution parts (executableCode, codeExecutionResult) stay in the answer as Markdown", async () => {
    const [s, j] = geminiBoth([
      { text: "Let me compute." },
      { executableCode: { language: "PYTHON", code: "print(2 + 2)" } },
      { codeExecutionResult: { outcome: "OUTCOME_OK", output: "4\n" } },
      { text: "The answer is 4." },
    ]);
    for (const [stream, r] of [[true, s], [false, j]] as const) {
      const a = await viaChat(org.key, GEMINI, await replay(r), stream);
      expect(a.text).toBe("Let me compute.\n```python\nprint(2 + 2)\n```\n\n```output\n4\n\n```\nThe answer is 4.");
    }
  });

  it("an answer made only of parts the gateway cannot translate ends with an error envelope", async () => {
    const [s, j] = geminiBoth([{ hologram: { data: "x" } }]);
    const streamed = await viaChat(org.key, GEMINI, await replay(s), true);
    expect(streamed.error).toMatch(/cannot translate \(hologram\)/);
    expect(streamed.finish).toBeNull();
    const whole = await viaChat(org.key, GEMINI, await replay(j), false);
    expect(whole.status).toBe(502);
    expect(whole.error).toMatch(/cannot translate \(hologram\)/);
  });
});

const ev = (eventType: string, body: unknown) => ({ eventType, body });
const metadata = ev("metadata", { usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 }, metrics: { latencyMs: 100 } });
const converse = (content: unknown[], stopReason: string): Replay => ({
  json: { output: { message: { role: "assistant", content } }, stopReason, usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 }, metrics: { latencyMs: 100 } },
});

describe("Bedrock Converse events", () => {
  it("a tool call without input deltas (a tool without parameters) carries `{}`, streamed and not, through every front door", async () => {
    const s: Replay = {
      events: [
        ev("messageStart", { role: "assistant" }),
        ev("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_1", name: "rollDie" } } }),
        ev("contentBlockStop", { contentBlockIndex: 0 }),
        ev("messageStop", { stopReason: "tool_use" }),
        metadata,
      ],
    };
    const j = converse([{ toolUse: { toolUseId: "tooluse_1", name: "rollDie", input: {} } }], "tool_use");
    for (const [door, via] of [["chat", viaChat], ["messages", viaMessages], ["responses", viaResponses]] as const) {
      for (const [stream, r] of [[true, s], [false, j]] as const) {
        const a = await via(org.key, BEDROCK, await replay(r), stream);
        expect(a.tools, `${door} stream=${stream}: ${a.body}`).toEqual([{ name: "rollDie", arguments: "{}" }]);
      }
    }
  });

  it("reasoning and cited text: reasoning deltas are reasoning, citation deltas skipped, citationsContent's text is the answer", async () => {
    const s: Replay = {
      events: [
        ev("messageStart", { role: "assistant" }),
        ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Reading the document." } } }),
        ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "sig" } } }),
        ev("contentBlockStop", { contentBlockIndex: 0 }),
        ev("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "It is sunny." } }),
        ev("contentBlockDelta", { contentBlockIndex: 1, delta: { citation: { title: "Weather", sourceContent: [{ text: "sunny" }], location: { documentChar: { documentIndex: 0, start: 0, end: 5 } } } } }),
        ev("contentBlockStop", { contentBlockIndex: 1 }),
        ev("messageStop", { stopReason: "end_turn" }),
        metadata,
      ],
    };
    const j = converse([
      { reasoningContent: { reasoningText: { text: "Reading the document.", signature: "sig" } } },
      { citationsContent: { content: [{ text: "It is sunny." }], citations: [{ title: "Weather", sourceContent: [{ text: "sunny" }] }] } },
    ], "end_turn");
    for (const [stream, r] of [[true, s], [false, j]] as const) {
      const a = await viaChat(org.key, BEDROCK, await replay(r), stream);
      expect(a.text, a.body).toBe("It is sunny.");
      expect(a.reasoning).toBe("Reading the document.");
      expect(a.error).toBeNull();
    }
  });

  it("an answer made only of blocks the gateway cannot translate ends with an error envelope", async () => {
    const s: Replay = { events: [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { hologram: { data: "x" } } }), ev("contentBlockStop", { contentBlockIndex: 0 }), ev("messageStop", { stopReason: "end_turn" }), metadata] };
    const streamed = await viaChat(org.key, BEDROCK, await replay(s), true);
    expect(streamed.error).toMatch(/cannot translate \(hologram\)/);
    const whole = await viaChat(org.key, BEDROCK, await replay(converse([{ hologram: { data: "x" } }], "end_turn")), false);
    expect(whole.status).toBe(502);
    expect(whole.error).toMatch(/cannot translate \(hologram\)/);
  });
});

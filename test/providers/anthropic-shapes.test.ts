/**
 * Anthropic answers as the real API sends them, fed to the gateway exactly (fake upstream replay)
 * and read through every front door, streamed and not: tool calls whose input comes whole or
 * empty, a finished message inside `message_start`, server-tool blocks, refusals, and blocks the
 * gateway cannot translate.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics } from "../chat/helpers";
import { anthropicSse, replay, viaChat, viaMessages, viaResponses, type Answer, type Replay } from "./replay";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const MODEL = "anthropic/claude-sonnet-4";
const usage = { input_tokens: 12, output_tokens: 1 };
const start = (content: unknown[] = [], stop_reason: string | null = null) => ({
  type: "message_start",
  message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-20250514", content, stop_reason, stop_sequence: null, usage },
});
const stop = { type: "message_stop" };
const delta = (stop_reason: string, output_tokens = 20) => ({ type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } });
const message = (content: unknown[], stop_reason: string) => ({ json: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-20250514", content, stop_reason, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 20 } } });

type Door = (key: string, model: string, directive: string, stream: boolean) => Promise<Answer>;
const DOORS: Array<[string, Door]> = [["chat", viaChat], ["messages", viaMessages], ["responses", viaResponses]];

/** Every front door, streamed (`streamed`) and not (`whole`), answers `expectFn`. */
async function everyDoor(streamed: Replay, whole: Replay, check: (a: Answer, door: string) => void): Promise<void> {
  for (const [door, via] of DOORS) {
    for (const [stream, r] of [[true, streamed], [false, whole]] as const) {
      const a = await via(org.key, MODEL, await replay(r), stream);
      expect(a.status, `${door} stream=${stream}: ${a.body}`).toBe(200);
      check(a, `${door} stream=${stream}`);
    }
  }
}

describe("anthropic tool calls", () => {
  it("a tool's whole input in content_block_start, with no input_json_delta, streams as its JSON arguments", async () => {
    const streamed = anthropicSse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "rollDie", input: { player: "player1" } } },
      { type: "content_block_stop", index: 0 },
      delta("tool_use"),
      stop,
    );
    const whole = message([{ type: "tool_use", id: "toolu_1", name: "rollDie", input: { player: "player1" } }], "tool_use");
    await everyDoor(streamed, whole, (a, where) => {
      expect(a.tools, where).toEqual([{ name: "rollDie", arguments: '{"player":"player1"}' }]);
      expect(a.error, where).toBeNull();
    });
    const chat = await viaChat(org.key, MODEL, await replay(streamed), true);
    expect(chat.finish).toBe("tool_calls");
  });

  it("a tool without arguments (`input: {}` and one empty partial_json) streams `{}`", async () => {
    const streamed = anthropicSse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Rolling." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_2", name: "rollDie", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
      { type: "content_block_stop", index: 1 },
      delta("tool_use"),
      stop,
    );
    const whole = message([{ type: "text", text: "Rolling." }, { type: "tool_use", id: "toolu_2", name: "rollDie", input: {} }], "tool_use");
    await everyDoor(streamed, whole, (a, where) => {
      expect(a.text, where).toBe("Rolling.");
      expect(a.tools, where).toEqual([{ name: "rollDie", arguments: "{}" }]);
    });
  });

  it("a finished message inside message_start, followed only by message_stop, is the whole answer", async () => {
    const content = [
      { type: "text", text: "Let me roll." },
      { type: "tool_use", id: "toolu_3", name: "rollDie", input: { player: "player2" } },
    ];
    const streamed = anthropicSse({ ...start(content, "tool_use"), message: { ...start(content, "tool_use").message, usage: { input_tokens: 12, output_tokens: 30 } } }, stop);
    await everyDoor(streamed, message(content, "tool_use"), (a, where) => {
      expect(a.error, where).toBeNull();
      expect(a.text, where).toBe("Let me roll.");
      expect(a.tools, where).toEqual([{ name: "rollDie", arguments: '{"player":"player2"}' }]);
    });
    const chat = await viaChat(org.key, MODEL, await replay(streamed), true);
    expect(chat.finish).toBe("tool_calls");
  });
});

describe("anthropic content blocks", () => {
  it("server-tool blocks (server_tool_use, web_search_tool_result, code execution) are skipped; the text around them is the answer", async () => {
    const blocks = [
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "weather paris" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com", title: "Weather", encrypted_content: "x" }] },
      { type: "text", text: "It is sunny.", citations: [{ type: "web_search_result_location", url: "https://example.com", title: "Weather", encrypted_index: "y", cited_text: "sunny" }] },
      { type: "server_tool_use", id: "srvtoolu_2", name: "code_execution", input: { code: "print(1)" } },
      { type: "code_execution_tool_result", tool_use_id: "srvtoolu_2", content: { type: "code_execution_result", stdout: "1", stderr: "", return_code: 0 } },
    ];
    const streamed = anthropicSse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"query":"weather paris"}' } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: blocks[1] },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: { type: "web_search_result_location", url: "https://example.com", cited_text: "sunny" } } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "It is sunny." } },
      { type: "content_block_stop", index: 2 },
      delta("end_turn"),
      stop,
    );
    await everyDoor(streamed, message(blocks, "end_turn"), (a, where) => {
      expect(a.text, where).toBe("It is sunny.");
      expect(a.tools, where).toEqual([]);
      expect(a.error, where).toBeNull();
    });
  });

  it("a refusal (stop_reason refusal) keeps the text streamed before it and finishes content_filter", async () => {
    const streamed = anthropicSse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "I can't help" } },
      { type: "content_block_stop", index: 0 },
      delta("refusal"),
      stop,
    );
    for (const stream of [true, false]) {
      const a = await viaChat(org.key, MODEL, await replay(stream ? streamed : message([{ type: "text", text: "I can't help" }], "refusal")), stream);
      expect(a.text).toBe("I can't help");
      expect(a.finish).toBe("content_filter");
    }
  });

  it("an answer made only of blocks the gateway cannot translate ends with an error envelope, not an empty success, and costs nothing", async () => {
    const odd = { type: "hologram", data: "..." };
    const streamed = anthropicSse(start(), { type: "content_block_start", index: 0, content_block: odd }, { type: "content_block_stop", index: 0 }, delta("end_turn"), stop);
    const s = await viaChat(org.key, MODEL, await replay(streamed), true);
    expect(s.error).toMatch(/cannot translate \(hologram\)/);
    expect(s.finish).toBeNull();
    const j = await viaChat(org.key, MODEL, await replay(message([odd], "end_turn")), false);
    expect(j.status).toBe(502);
    expect(j.error).toMatch(/cannot translate \(hologram\)/);
    // Next to an answer, such a block is skipped.
    const mixed = await viaChat(org.key, MODEL, await replay(message([odd, { type: "text", text: "fine" }], "end_turn")), false);
    expect(mixed.text).toBe("fine");
  });
});

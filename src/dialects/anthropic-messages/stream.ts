/**
 * Chat-completion chunks -> Anthropic's streaming events, exactly in Anthropic's order:
 *   message_start, ping,
 *   per content block: content_block_start, content_block_delta… (thinking_delta, signature_delta,
 *   text_delta, input_json_delta), content_block_stop,
 *   message_delta (stop_reason + usage), message_stop.
 * A thinking block's text streams as `reasoning`; its signature comes at its end in
 * `reasoning_details` (Anthropic-format upstreams only) and closes it. Reasoning of other providers
 * has no signature: its block keeps `signature: ""`. A redacted block comes whole.
 * A keep-alive becomes `ping`; a failed stream ends with `event: error`. Pure state machine.
 */
import { firstChoice, type ChatChunk, type ChunkEncoder } from "../chat-sse";
import { anthropicErrorType, stopReasonOf, usageOf, type StopReason } from "./response";

const event = (name: string, data: Record<string, unknown>): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

type OpenBlock = { kind: "thinking" | "redacted" | "text" } | { kind: "tool"; toolIndex: number };

export class MessagesStreamEncoder implements ChunkEncoder {
  private index = -1;
  private open: OpenBlock | null = null;
  private stop: StopReason | null = null;
  private usage: ChatChunk["usage"] | null = null;
  private failed = false;
  /** An OpenAI-format refusal was streamed (as text): the stop reason is `refusal`. */
  private refused = false;

  /** `model`: the requested one, named unless the first chunk names the model that served. */
  constructor(private readonly id: string, private readonly model: string) {}

  start(served?: string): string {
    const message = {
      id: this.id,
      type: "message",
      role: "assistant",
      model: served ?? this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return event("message_start", { type: "message_start", message }) + event("ping", { type: "ping" });
  }

  private close(): string {
    if (!this.open) return "";
    this.open = null;
    return event("content_block_stop", { type: "content_block_stop", index: this.index });
  }

  private begin(block: OpenBlock, contentBlock: Record<string, unknown>): string {
    const out = this.close();
    this.index += 1;
    this.open = block;
    return out + event("content_block_start", { type: "content_block_start", index: this.index, content_block: contentBlock });
  }

  private delta(delta: Record<string, unknown>): string {
    return event("content_block_delta", { type: "content_block_delta", index: this.index, delta });
  }

  chunk(c: ChatChunk): string {
    if (c.usage) this.usage = c.usage;
    const choice = firstChoice(c);
    if (!choice) return "";
    let out = "";
    const d = choice.delta;
    if (d.reasoning) {
      if (this.open?.kind !== "thinking") out += this.begin({ kind: "thinking" }, { type: "thinking", thinking: "", signature: "" });
      out += this.delta({ type: "thinking_delta", thinking: d.reasoning });
    }
    for (const detail of d.reasoning_details ?? []) {
      if (detail.type === "reasoning.encrypted") {
        out += this.begin({ kind: "redacted" }, { type: "redacted_thinking", data: detail.data }) + this.close();
        continue;
      }
      if (!detail.signature) continue;
      if (this.open?.kind !== "thinking") {
        out += this.begin({ kind: "thinking" }, { type: "thinking", thinking: "", signature: "" });
        if (detail.text) out += this.delta({ type: "thinking_delta", thinking: detail.text });
      }
      out += this.delta({ type: "signature_delta", signature: detail.signature }) + this.close();
    }
    // Claude's own refusal is text with stop_reason `refusal`; an OpenAI-format refusal becomes that.
    if (d.refusal) this.refused = true;
    const text = (d.content ?? "") + (d.refusal ?? "");
    if (text) {
      if (this.open?.kind !== "text") out += this.begin({ kind: "text" }, { type: "text", text: "" });
      out += this.delta({ type: "text_delta", text });
    }
    for (const tc of d.tool_calls ?? []) {
      const current = this.open?.kind === "tool" ? this.open.toolIndex : null;
      if (current !== tc.index) {
        out += this.begin({ kind: "tool", toolIndex: tc.index }, { type: "tool_use", id: tc.id ?? `toolu_${this.index + 1}`, name: tc.function?.name ?? "", input: {} });
      }
      if (tc.function?.arguments) out += this.delta({ type: "input_json_delta", partial_json: tc.function.arguments });
    }
    if (choice.finish) {
      this.stop = this.refused ? "refusal" : stopReasonOf(choice.finish);
      out += this.close();
    }
    return out;
  }

  keepAlive(): string {
    return event("ping", { type: "ping" });
  }

  error(e: { message: string; type: string }): string {
    this.failed = true;
    return this.close() + event("error", { type: "error", error: { type: anthropicErrorType(e.type === "upstream_error" ? 502 : 500), message: e.message } });
  }

  done(): string {
    if (this.failed) return "";
    const out = this.close();
    return (
      out +
      event("message_delta", { type: "message_delta", delta: { stop_reason: this.stop ?? "end_turn", stop_sequence: null }, usage: usageOf(this.usage) }) +
      event("message_stop", { type: "message_stop" })
    );
  }
}

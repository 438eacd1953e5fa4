/**
 * Shared by the dialects (Anthropic Messages, OpenAI Responses): the chat pipeline answers a
 * streamed request with OpenAI chat-completion SSE; a dialect re-encodes each frame as it passes
 * (no buffering beyond one frame). Keep-alive comments become the dialect's own keep-alive, the
 * trailing `{"error":…}` frame of a failed stream becomes its error event. Cancelling the
 * re-encoded body cancels the chat stream, which aborts the upstream request (client gone).
 */

import type { ReasoningDetail } from "../providers/types";

/** One `chat.completion.chunk` as src/routes/chat/stream.ts writes it. */
export interface ChatChunk {
  id?: string;
  model?: string;
  choices?: Array<{
    index: number;
    delta?: {
      content?: string | null;
      reasoning?: string | null;
      refusal?: string | null;
      reasoning_details?: ReasoningDetail[];
      /** `custom`: a custom tool's call, its input streamed as `custom.input` pieces. */
      tool_calls?: Array<{ index: number; id?: string; type?: "function" | "custom"; function?: { name?: string; arguments?: string }; custom?: { name?: string; input?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatUsageJson;
  error?: { message?: string; type?: string; code?: string };
}

/** The fields of the gateway's `usage` object the dialects read (src/billing/usage-json.ts). */
export interface ChatUsageJson {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
  cost?: number;
}

/** A tool call of a `chat.completion` (src/providers/tool-call-wire.ts). */
export type ChatToolCallJson = { id: string; type?: "function"; function: { name: string; arguments: string } } | { id: string; type: "custom"; custom: { name: string; input: string } };

/** The `chat.completion` fields the translation reads. */
export interface CompletionJson {
  model: string;
  choices: Array<{
    message: { content: string | null; reasoning?: string | null; refusal?: string | null; reasoning_details?: ReasoningDetail[]; tool_calls?: ChatToolCallJson[] };
    finish_reason: string | null;
  }>;
  usage?: ChatUsageJson;
  metadata?: unknown;
}

/** The delta and finish reason of choice 0 in a chunk (dialects have one choice), or null. */
export function firstChoice(c: ChatChunk): { delta: NonNullable<NonNullable<ChatChunk["choices"]>[number]["delta"]>; finish: string | null } | null {
  const choice = c.choices?.find((ch) => ch.index === 0);
  return choice ? { delta: choice.delta ?? {}, finish: choice.finish_reason ?? null } : null;
}

/** A dialect's encoder: each method returns the text to send (possibly empty). */
export interface ChunkEncoder {
  /**
   * The opening events, sent before the first frame's own: `model` is the model the first chunk
   * names (the one that served, a fallback's id included), absent when the stream opens otherwise.
   */
  start(model?: string): string;
  chunk(c: ChatChunk): string;
  /** A `: keep-alive` comment of the chat stream. */
  keepAlive(): string;
  /** The failed-stream frame (`{"error":{…}}`). */
  error(e: { message: string; type: string }): string;
  /** `[DONE]` (or the end of the body). */
  done(): string;
}

/**
 * Splits the gateway's own SSE text (LF line ends) into blocks at blank lines, linear in the
 * bytes: each chunk is searched once, and a block that spans chunks is kept as pieces joined
 * once, when it ends (a multi-megabyte frame in small chunks is not rescanned per chunk).
 */
class BlockSplitter {
  private pieces: string[] = [];

  push(text: string): string[] {
    const blocks: string[] = [];
    let start = 0;
    // A blank line split across chunks: the last piece ends with LF and this chunk starts with one.
    const last = this.pieces[this.pieces.length - 1];
    if (last !== undefined && last.endsWith("\n") && text.startsWith("\n")) {
      this.pieces[this.pieces.length - 1] = last.slice(0, -1);
      blocks.push(this.take(""));
      start = 1;
    }
    for (let cut = text.indexOf("\n\n", start); cut >= 0; cut = text.indexOf("\n\n", start)) {
      blocks.push(this.take(text.slice(start, cut)));
      start = cut + 2;
    }
    if (start < text.length) this.pieces.push(text.slice(start));
    return blocks;
  }

  /** What is left at the end of the body. */
  rest(): string {
    return this.take("");
  }

  private take(tail: string): string {
    if (!this.pieces.length) return tail;
    this.pieces.push(tail);
    const block = this.pieces.join("");
    this.pieces = [];
    return block;
  }
}

/**
 * Re-encodes chat SSE through `enc`; `start()` runs once, with the first frame (the pipeline answers
 * only once its upstream sent the first event, so it is already there), `done()` once, at `[DONE]`
 * or at the end of the body.
 */
export function reencodeChatSse(body: ReadableStream<Uint8Array>, enc: ChunkEncoder): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const blocks = new BlockSplitter();
  let finished = false;
  let started = false;
  const begin = (first: ChatChunk | null): string => {
    if (started) return "";
    started = true;
    return enc.start(first?.model);
  };
  const frame = (block: string): string => {
    if (finished) return "";
    if (block.startsWith(":")) return begin(null) + enc.keepAlive();
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    if (!data) return "";
    if (data === "[DONE]") {
      finished = true;
      return begin(null) + enc.done();
    }
    let parsed: ChatChunk;
    try {
      parsed = JSON.parse(data) as ChatChunk;
    } catch {
      return "";
    }
    if (parsed.error && !parsed.choices) {
      return begin(null) + enc.error({ message: parsed.error.message ?? "stream failed", type: parsed.error.type ?? "api_error" });
    }
    return begin(parsed) + enc.chunk(parsed);
  };
  const emit = (controller: TransformStreamDefaultController<Uint8Array>, text: string) => {
    if (text) controller.enqueue(encoder.encode(text));
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(bytes, controller) {
        for (const block of blocks.push(decoder.decode(bytes, { stream: true }))) emit(controller, frame(block));
      },
      flush(controller) {
        const rest = (blocks.rest() + decoder.decode()).trim();
        if (rest) emit(controller, frame(rest));
        if (!finished) {
          finished = true;
          emit(controller, begin(null) + enc.done());
        }
      },
    }),
  );
}

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
      reasoning_details?: ReasoningDetail[];
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
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

/** The `chat.completion` fields the translation reads. */
export interface CompletionJson {
  model: string;
  choices: Array<{
    message: { content: string | null; reasoning?: string | null; reasoning_details?: ReasoningDetail[]; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> };
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
  start(): string;
  chunk(c: ChatChunk): string;
  /** A `: keep-alive` comment of the chat stream. */
  keepAlive(): string;
  /** The failed-stream frame (`{"error":{…}}`). */
  error(e: { message: string; type: string }): string;
  /** `[DONE]` (or the end of the body). */
  done(): string;
}

/** Re-encodes chat SSE through `enc`; `done()` runs once, at `[DONE]` or at the end of the body. */
export function reencodeChatSse(body: ReadableStream<Uint8Array>, enc: ChunkEncoder): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
  let finished = false;
  const frame = (block: string): string => {
    if (finished) return "";
    if (block.startsWith(":")) return enc.keepAlive();
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    if (!data) return "";
    if (data === "[DONE]") {
      finished = true;
      return enc.done();
    }
    let parsed: ChatChunk;
    try {
      parsed = JSON.parse(data) as ChatChunk;
    } catch {
      return "";
    }
    if (parsed.error && !parsed.choices) {
      return enc.error({ message: parsed.error.message ?? "stream failed", type: parsed.error.type ?? "api_error" });
    }
    return enc.chunk(parsed);
  };
  const emit = (controller: TransformStreamDefaultController<Uint8Array>, text: string) => {
    if (text) controller.enqueue(encoder.encode(text));
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        emit(controller, enc.start());
      },
      transform(bytes, controller) {
        buffer += decoder.decode(bytes, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          emit(controller, frame(buffer.slice(0, cut)));
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf("\n\n");
        }
      },
      flush(controller) {
        if (buffer.trim()) emit(controller, frame(buffer.trim()));
        if (!finished) {
          finished = true;
          emit(controller, enc.done());
        }
      },
    }),
  );
}

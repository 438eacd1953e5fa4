/**
 * Server-Sent Events to the client, exactly as OpenAI emits them:
 *   data: {"id":"chatcmpl-…","object":"chat.completion.chunk",…,"choices":[{"index":0,"delta":{"role":"assistant","content":""…}}]}
 *   …one chunk per upstream event, forwarded as soon as it arrives…
 *   data: {…"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
 *   data: {…"choices":[],"usage":{…cost…},"metadata":{…}}
 *   data: [DONE]
 * Tool calls arrive incrementally with stable `index` and an `id` on their first piece (generated
 * when the provider gives none). Silences longer than KEEPALIVE_MS get a `: keep-alive` comment.
 * An upstream failure after the first byte becomes `data: {"error":{…}}` followed by [DONE].
 *
 * The pump runs in waitUntil, not in the client's read loop: when the client disconnects the
 * upstream request is aborted and `finish` still runs (log row, billing for what was generated).
 * A disconnect is seen four ways: a write that fails, the body being cancelled, the request's
 * `clientSignal`, or a write the client has not taken for WRITE_STALL_MS. The last one is for a
 * client that vanishes without the runtime telling: under `wrangler dev`, about 1 in 20 sockets
 * reset right after the headers leave the body neither cancelled nor read and the signal not
 * aborted; the pump then waited on its write forever, the runtime ended the request's waitUntil,
 * and the request had no log row and no charge. The stall timer keeps the pump alive and ends it.
 */
import type { ChunkDelta, FinishReason, NormalizedUsage, StreamEvent } from "../../providers/types";
import { newId } from "../../lib/ids";
import { wireToolCallDelta } from "../../providers/tool-call-wire";

const KEEPALIVE_MS = 15_000;
/** A write the client has not taken for this long means the client is gone (see the header). Override: STREAM_WRITE_STALL_MS. */
export const WRITE_STALL_MS = 10_000;

export const writeStallMs = (env: object): number => {
  const raw = (env as Record<string, unknown>).STREAM_WRITE_STALL_MS;
  const v = typeof raw === "string" ? Number(raw) : NaN;
  return Number.isFinite(v) && v > 0 ? v : WRITE_STALL_MS;
};
const KEEPALIVE_CHECK_MS = 5_000;

export interface StreamOutcome {
  status: "complete" | "upstream_error" | "client_aborted";
  /** Last usage the upstream reported, if any. */
  usage: NormalizedUsage | null;
  /** Everything generated so far (content, reasoning, tool arguments), for estimates. */
  generatedText: string;
  finishReasons: Map<number, FinishReason>;
  /** The normalized events (tool call ids filled in), for the response cache. */
  events: StreamEvent[];
  error: { message: string; errorType: string } | null;
  /** From the start of the pump to the end of the upstream stream (ms). */
  generationMs: number;
}

export interface SseStreamOptions {
  completionId: string;
  created: number;
  model: string;
  first: StreamEvent;
  iterator: AsyncIterator<StreamEvent>;
  /** Aborts the upstream request. */
  abort: AbortController;
  /** The client's request signal: aborted when it went away, even if the body was never cancelled. */
  clientSignal?: AbortSignal;
  /** Maximum silence of the upstream between two events before it counts as failed (the stream ends with an error). */
  idleTimeoutMs: number;
  /** Epoch ms by which the upstream must have finished (a whole-answer timeout the caller chose), else none. */
  deadlineAt?: number | null;
  /** A write the client has not taken for this long ends the stream as a client abort (default WRITE_STALL_MS). */
  writeStallMs?: number;
  waitUntil: (p: Promise<unknown>) => void;
  /**
   * Called once at the end. For a complete stream it returns the final usage chunk (usage with
   * cost, metadata) to send before [DONE]; for an upstream error it returns the error envelope.
   */
  finish: (outcome: StreamOutcome) => Promise<Record<string, unknown>>;
}

/** The upstream stream stalled (between-chunk timeout) or outran the caller's whole-answer timeout. */
class StreamTimeout extends Error {}

const seconds = (ms: number): string => (ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

const sse = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

class ChunkNormalizer {
  private roleSent = new Set<number>();
  private toolIds = new Map<string, string>();
  /** Tool calls (`choice:index`) of custom tools: their later pieces go out as `custom.input`. */
  private customTools = new Set<string>();
  readonly finishReasons = new Map<number, FinishReason>();
  readonly started = new Set<number>();
  readonly events: StreamEvent[] = [];
  text = "";
  usage: NormalizedUsage | null = null;

  /** The choice entry of the chunk to send for this event, or null (usage is sent at the end). */
  choice(e: StreamEvent): Record<string, unknown> | null {
    if (e.type === "usage") {
      this.usage = e.usage;
      this.events.push(e);
      return null;
    }
    if (e.type === "error") return null;
    this.started.add(e.choiceIndex);
    if (e.type === "finish") {
      this.finishReasons.set(e.choiceIndex, e.finishReason);
      this.events.push(e);
      return { index: e.choiceIndex, delta: {}, logprobs: null, finish_reason: e.finishReason };
    }
    const delta: ChunkDelta = { ...e.delta };
    const custom = new Set<number>();
    if (delta.tool_calls) {
      delta.tool_calls = delta.tool_calls.map((tc) => {
        const key = `${e.choiceIndex}:${tc.index}`;
        let id = this.toolIds.get(key);
        if (!id) {
          id = tc.id ?? `call_${newId("x").slice(2)}`;
          this.toolIds.set(key, id);
          if (tc.type === "custom") this.customTools.add(key);
          return { ...tc, id, type: tc.type ?? "function" };
        }
        const { id: _drop, type: _t, ...rest } = tc;
        return rest;
      });
      for (const tc of delta.tool_calls) {
        this.text += (tc.function.name ?? "") + (tc.function.arguments ?? "");
        if (this.customTools.has(`${e.choiceIndex}:${tc.index}`)) custom.add(tc.index);
      }
    }
    this.text += (delta.content ?? "") + (delta.reasoning ?? "");
    this.events.push({ type: "delta", choiceIndex: e.choiceIndex, delta });
    let wire: Record<string, unknown> = { ...delta };
    delete wire.role;
    if (delta.tool_calls) wire.tool_calls = delta.tool_calls.map((tc) => wireToolCallDelta(tc, custom.has(tc.index)));
    if (!this.roleSent.has(e.choiceIndex)) {
      this.roleSent.add(e.choiceIndex);
      wire = { role: "assistant", content: "", ...wire };
    }
    return { index: e.choiceIndex, delta: wire, logprobs: null, finish_reason: null };
  }

  /** Every choice that produced output also finished. */
  complete(): boolean {
    if (this.started.size === 0) return false;
    for (const i of this.started) if (!this.finishReasons.has(i)) return false;
    return true;
  }
}

/** Starts pumping upstream events to a new SSE body; returns the body for the Response. */
export function startSseStream(opts: SseStreamOptions): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  const norm = new ChunkNormalizer();
  const startedAt = Date.now();
  let lastWrite = Date.now();
  let clientGone = false;
  let goneNow: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (goneNow = resolve));

  const markGone = () => {
    if (clientGone) return;
    clientGone = true;
    goneNow();
    opts.abort.abort();
  };
  writer.closed.catch(markGone);
  if (opts.clientSignal?.aborted) markGone();
  else opts.clientSignal?.addEventListener("abort", markGone, { once: true });

  /**
   * A client that stopped reading without closing never completes a write (nor the close): the
   * signal, or the stall timer when no signal comes, ends the wait. Rejects when `op` does.
   */
  const untilTaken = async (op: Promise<unknown>): Promise<void> => {
    let stall: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<void>((resolve) => {
      stall = setTimeout(() => {
        markGone();
        resolve();
      }, opts.writeStallMs ?? WRITE_STALL_MS);
    });
    op.catch(() => undefined);
    try {
      await Promise.race([op, gone, stalled]);
    } finally {
      clearTimeout(stall);
    }
  };
  const send = async (text: string): Promise<void> => {
    if (clientGone) return;
    lastWrite = Date.now();
    try {
      await untilTaken(writer.write(encoder.encode(text)));
    } catch {
      markGone();
    }
  };
  const chunk = (choice: Record<string, unknown>) =>
    sse({ id: opts.completionId, object: "chat.completion.chunk", created: opts.created, model: opts.model, choices: [choice] });

  const keepAlive = setInterval(() => {
    if (!clientGone && Date.now() - lastWrite >= KEEPALIVE_MS) void send(": keep-alive\n\n");
  }, KEEPALIVE_CHECK_MS);

  /** The next upstream event, or a rejection once the upstream was silent too long or ran out of time. */
  const nextWithIdleTimeout = async (): Promise<IteratorResult<StreamEvent>> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const untilDeadline = opts.deadlineAt ? Math.max(0, opts.deadlineAt - Date.now()) : Infinity;
    const deadline = untilDeadline < opts.idleTimeoutMs;
    const waitMs = Math.min(opts.idleTimeoutMs, untilDeadline);
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        opts.abort.abort();
        reject(new StreamTimeout(deadline ? "the provider did not finish the answer within the request's timeout" : `the provider sent nothing for ${seconds(opts.idleTimeoutMs)}`));
      }, waitMs);
    });
    try {
      return await Promise.race([opts.iterator.next(), idle]);
    } finally {
      clearTimeout(timer);
    }
  };

  const run = async () => {
    let error: StreamOutcome["error"] = null;
    let event: StreamEvent | null = opts.first;
    try {
      while (event && !clientGone) {
        if (event.type === "error") {
          error = { message: event.message, errorType: event.errorType };
          break;
        }
        const choice = norm.choice(event);
        if (choice) await send(chunk(choice));
        if (clientGone) break;
        const next = await nextWithIdleTimeout();
        event = next.done ? null : next.value;
      }
    } catch (err) {
      if (!clientGone) error = { message: err instanceof Error ? err.message : String(err), errorType: err instanceof StreamTimeout ? "timeout" : "stream_error" };
    }
    if (clientGone) void opts.iterator.return?.().catch(() => undefined);
    if (!error && !clientGone && !norm.complete()) {
      error = { message: "the provider's stream ended before the answer was complete", errorType: "incomplete_stream" };
    }
    const outcome: StreamOutcome = {
      status: clientGone ? "client_aborted" : error ? "upstream_error" : "complete",
      usage: norm.usage,
      generatedText: norm.text,
      finishReasons: norm.finishReasons,
      events: norm.events,
      error,
      generationMs: Date.now() - startedAt,
    };
    let final: Record<string, unknown> | null = null;
    try {
      final = await opts.finish(outcome);
    } catch (err) {
      console.error("stream finish failed", err instanceof Error ? err.message : String(err));
      final = { error: { message: "Internal error while finishing the stream", type: "api_error", param: null, code: "internal_error" } };
    }
    clearInterval(keepAlive);
    opts.clientSignal?.removeEventListener("abort", markGone);
    if (!clientGone) {
      await send(sse(final));
      await send("data: [DONE]\n\n");
      try {
        // Not awaited past the stall bound: a client that stopped reading before the end of the
        // body (its signal no longer watched here) would hold this waitUntil until the runtime ends it.
        if (!clientGone) await untilTaken(writer.close());
      } catch {
        // client already gone
      }
    }
  };
  opts.waitUntil(run());
  return readable;
}

/** An iterator over stored events (cache replay), fed through the same encoder. */
export function replayIterator(events: readonly StreamEvent[]): { first: StreamEvent; iterator: AsyncIterator<StreamEvent> } | null {
  const [first, ...rest] = events;
  if (!first) return null;
  let i = 0;
  return {
    first,
    iterator: {
      next: () => Promise.resolve(i < rest.length ? { done: false, value: rest[i++]! } : { done: true, value: undefined }),
    },
  };
}

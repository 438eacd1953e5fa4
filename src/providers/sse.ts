/**
 * Server-Sent Events parser (WHATWG EventSource rules) over a byte stream. Handles LF, CRLF and
 * CR line endings, a CRLF split across chunks, multi-line `data:`, `event:`/`id:` fields, comment
 * lines (`:`), and chunk boundaries anywhere (even inside a UTF-8 sequence). A frame is yielded as
 * soon as its terminating blank line arrives. At end of input a pending frame is dispatched too
 * (some upstreams omit the final blank line).
 */

export interface SseFrame {
  /** `event:` field; undefined when absent (the default "message"). */
  event?: string;
  /** `data:` lines joined with "\n". */
  data: string;
  id?: string;
}

/** Incremental parser: feed decoded text, get completed frames back. */
export class SseParser {
  private buffer = "";
  private lastWasCR = false;
  private data: string[] = [];
  private event: string | undefined;
  private id: string | undefined;

  push(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    if (text === "") return frames;
    let chunk = text;
    if (this.lastWasCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.lastWasCR = false;
    this.buffer += chunk;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      const line = this.buffer.slice(start, i);
      if (ch === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.lastWasCR = true;
        }
      }
      start = i + 1;
      const frame = this.line(line);
      if (frame) frames.push(frame);
    }
    this.buffer = this.buffer.slice(start);
    return frames;
  }

  /** End of input: the unterminated last line counts, and a pending frame is dispatched. */
  end(): SseFrame[] {
    const frames: SseFrame[] = [];
    if (this.buffer.length) {
      const frame = this.line(this.buffer);
      if (frame) frames.push(frame);
      this.buffer = "";
    }
    const last = this.line("");
    if (last) frames.push(last);
    return frames;
  }

  private line(line: string): SseFrame | undefined {
    if (line === "") {
      if (this.data.length === 0 && this.event === undefined) return undefined;
      const frame: SseFrame = { data: this.data.join("\n") };
      if (this.event !== undefined) frame.event = this.event;
      if (this.id !== undefined) frame.id = this.id;
      this.data = [];
      this.event = undefined;
      return frame;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id") this.id = value;
    return undefined;
  }
}

/** Yields SSE frames from a byte stream as they complete. Cancels the body if the consumer stops early. */
/**
 * How long the rest of a body is read after the consumer stopped at the stream's own end marker
 * (`readSse`'s `ended`): an upstream closes its body right after that marker, and a body read to
 * its end leaves the connection reusable for the next upstream request (a cancelled one is torn
 * down). An upstream that keeps the body open longer is cancelled then.
 */
export const SSE_DRAIN_MS = 50;

/**
 * The frames of an SSE body. A consumer that stops early (returns) cancels the body, unless
 * `ended()` says it stopped at the stream's own end marker (OpenAI's `[DONE]`): then the rest of
 * the body is read for up to SSE_DRAIN_MS first (its frames discarded), so the upstream
 * connection is not torn down by a stream that completed.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, opts: { ended?: () => boolean } = {}): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let done = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      for (const f of parser.push(decoder.decode(r.value, { stream: true }))) yield f;
    }
    done = true;
    for (const f of parser.push(decoder.decode())) yield f;
    for (const f of parser.end()) yield f;
  } finally {
    if (!done && !(opts.ended?.() === true && (await drained(reader, SSE_DRAIN_MS)))) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Reads `reader` to its end within `ms` (true), or gives up (false; a read may still be pending). */
async function drained(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const toEnd = (async (): Promise<boolean> => {
    for (;;) if ((await reader.read()).done) return true;
  })().catch(() => false);
  try {
    return await Promise.race([toEnd, late]);
  } finally {
    clearTimeout(timer);
  }
}

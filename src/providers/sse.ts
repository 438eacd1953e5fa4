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

/**
 * Incremental parser: feed decoded text, get completed frames back. Linear in the bytes: each
 * chunk is scanned once, and the pieces of a line that spans chunks are kept apart and joined
 * once, when the line ends (a 3 MB `data:` line in small chunks is not rescanned per chunk).
 */
export class SseParser {
  /** Pieces of the current, unterminated line. */
  private pending: string[] = [];
  private lastWasCR = false;
  private data: string[] = [];
  private event: string | undefined;
  private id: string | undefined;

  push(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    if (text === "") return frames;
    // A CRLF split across chunks: the LF ends no second line.
    let start = this.lastWasCR && text.charCodeAt(0) === 10 ? 1 : 0;
    this.lastWasCR = false;
    for (let i = start; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      let line = text.slice(start, i);
      if (this.pending.length) {
        this.pending.push(line);
        line = this.pending.join("");
        this.pending = [];
      }
      if (ch === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.lastWasCR = true;
        }
      }
      start = i + 1;
      const frame = this.line(line);
      if (frame) frames.push(frame);
    }
    if (start < text.length) this.pending.push(start === 0 ? text : text.slice(start));
    return frames;
  }

  /** End of input: the unterminated last line counts, and a pending frame is dispatched. */
  end(): SseFrame[] {
    const frames: SseFrame[] = [];
    if (this.pending.length) {
      const frame = this.line(this.pending.join(""));
      if (frame) frames.push(frame);
      this.pending = [];
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

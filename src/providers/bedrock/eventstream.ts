/**
 * Decoder for AWS `application/vnd.amazon.eventstream` binary framing:
 *   [total length u32][headers length u32][prelude CRC32 u32][headers][payload][message CRC32 u32]
 * Big-endian; the prelude CRC covers the first 8 bytes, the message CRC everything before it.
 * Header: [name length u8][name][value type u8][value]; types 0/1 bool, 2 i8, 3 i16, 4 i32,
 * 5 i64, 6 bytes (u16 length), 7 string (u16 length), 8 timestamp (i64 ms), 9 uuid (16 bytes).
 */

export type HeaderValue = string | number | boolean | bigint | Uint8Array | Date;

export interface EventStreamMessage {
  headers: Record<string, HeaderValue>;
  payload: Uint8Array;
}

export class EventStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EventStreamError";
  }
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as gzip). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = (CRC_TABLE[(c ^ (bytes[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const PRELUDE = 12;
const MIN_MESSAGE = 16;
/** Upper bound for one message (AWS caps event messages far below this). */
const MAX_MESSAGE = 16 * 1024 * 1024;

const utf8 = new TextDecoder();

function decodeHeaders(bytes: Uint8Array): Record<string, HeaderValue> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headers: Record<string, HeaderValue> = {};
  let o = 0;
  const need = (n: number) => {
    if (o + n > bytes.length) throw new EventStreamError("truncated header");
  };
  while (o < bytes.length) {
    need(1);
    const nameLen = view.getUint8(o);
    o += 1;
    need(nameLen + 1);
    const name = utf8.decode(bytes.subarray(o, o + nameLen));
    o += nameLen;
    const type = view.getUint8(o);
    o += 1;
    let value: HeaderValue;
    switch (type) {
      case 0: value = true; break;
      case 1: value = false; break;
      case 2: need(1); value = view.getInt8(o); o += 1; break;
      case 3: need(2); value = view.getInt16(o); o += 2; break;
      case 4: need(4); value = view.getInt32(o); o += 4; break;
      case 5: need(8); value = view.getBigInt64(o); o += 8; break;
      case 6:
      case 7: {
        need(2);
        const len = view.getUint16(o);
        o += 2;
        need(len);
        const raw = bytes.slice(o, o + len);
        value = type === 7 ? utf8.decode(raw) : raw;
        o += len;
        break;
      }
      case 8: need(8); value = new Date(Number(view.getBigInt64(o))); o += 8; break;
      case 9: need(16); value = bytes.slice(o, o + 16); o += 16; break;
      default:
        throw new EventStreamError(`unknown header type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

/** Decodes one complete message (exactly `bytes.length` long). Throws on a CRC mismatch. */
export function decodeMessage(bytes: Uint8Array): EventStreamMessage {
  if (bytes.length < MIN_MESSAGE) throw new EventStreamError("message too short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const total = view.getUint32(0);
  const headersLen = view.getUint32(4);
  if (total !== bytes.length) throw new EventStreamError("length mismatch");
  if (view.getUint32(8) !== crc32(bytes.subarray(0, 8))) throw new EventStreamError("prelude CRC mismatch");
  if (view.getUint32(total - 4) !== crc32(bytes.subarray(0, total - 4))) throw new EventStreamError("message CRC mismatch");
  if (PRELUDE + headersLen > total - 4) throw new EventStreamError("headers overflow the message");
  return {
    headers: decodeHeaders(bytes.subarray(PRELUDE, PRELUDE + headersLen)),
    payload: bytes.slice(PRELUDE + headersLen, total - 4),
  };
}

/**
 * Received bytes as the chunks they came in: a message is copied out once, when it is complete
 * (appending each chunk to one buffer would copy the whole buffer per chunk, quadratic in the
 * size of a large message).
 */
class ByteQueue {
  private chunks: Uint8Array[] = [];
  length = 0;

  push(chunk: Uint8Array): void {
    if (!chunk.length) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `n` bytes (n <= length), without consuming them. */
  peek(n: number): Uint8Array {
    const head = this.chunks[0];
    if (head && head.length >= n) return head.subarray(0, n);
    const out = new Uint8Array(n);
    let o = 0;
    for (const c of this.chunks) {
      if (o >= n) break;
      const part = c.subarray(0, n - o);
      out.set(part, o);
      o += part.length;
    }
    return out;
  }

  /** Removes and returns the first `n` bytes (n <= length). */
  take(n: number): Uint8Array {
    const out = this.peek(n);
    let left = n;
    while (left > 0) {
      const head = this.chunks[0]!;
      if (head.length > left) {
        this.chunks[0] = head.subarray(left);
        left = 0;
      } else {
        this.chunks.shift();
        left -= head.length;
      }
    }
    this.length -= n;
    return out;
  }
}

/** Yields messages from a byte stream as each completes; chunk boundaries may fall anywhere. */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  const reader = body.getReader();
  const queue = new ByteQueue();
  /** The length of the message being received, once its prelude is checked. */
  let total = 0;
  let done = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      queue.push(r.value);
      for (;;) {
        if (total === 0) {
          if (queue.length < PRELUDE) break;
          const prelude = queue.peek(PRELUDE);
          const view = new DataView(prelude.buffer, prelude.byteOffset, prelude.byteLength);
          if (view.getUint32(8) !== crc32(prelude.subarray(0, 8))) throw new EventStreamError("prelude CRC mismatch");
          total = view.getUint32(0);
          if (total < MIN_MESSAGE || total > MAX_MESSAGE) throw new EventStreamError(`bad message length ${total}`);
        }
        if (queue.length < total) break;
        const message = queue.take(total);
        total = 0;
        yield decodeMessage(message);
      }
    }
    done = true;
    if (queue.length) throw new EventStreamError("stream ended inside a message");
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Largest body read to its end (and discarded) after it went over its limit. Draining rather than
 * cancelling lets the client finish its upload and read the 413: under `wrangler dev`, cancelling a
 * chunked upload midway broke the next request ("worker restarted mid-request", 503). A body
 * larger than this is cancelled after all.
 */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Reads a body stream up to `max` bytes; null when it is longer, after reading the rest and
 * discarding it (up to DRAIN_MAX_BYTES in all, then the stream is cancelled).
 */
export async function readUpTo(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await drain(reader, size);
      return null;
    }
    chunks.push(value);
  }
  const buffer = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    buffer.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return buffer;
}

/** Reads and discards the rest of a body (`read` bytes so far); cancels it past DRAIN_MAX_BYTES. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number): Promise<void> {
  let total = read;
  try {
    for (;;) {
      if (total > DRAIN_MAX_BYTES) {
        await reader.cancel().catch(() => undefined);
        return;
      }
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
    }
  } catch {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Reads and discards a request body nobody read (a refusal answered before the body mattered),
 * instead of cancelling it or leaving it: under `wrangler dev` a request body cancelled, or left
 * unread, while the client was still sending it broke the connection, and the next request on it
 * got 503 "Your worker restarted mid-request". Bounded like every drain (DRAIN_MAX_BYTES, then
 * cancelled); a body someone else holds (locked or read) is left alone. Never throws.
 */
export async function discardBody(request: Request): Promise<void> {
  const body = request.body;
  if (!body || request.bodyUsed || body.locked) return;
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES) return;
  await drain(body.getReader(), 0);
}

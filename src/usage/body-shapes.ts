/**
 * Bodies of embeddings, image and moderation requests as they are kept (src/usage/bodies.ts): the
 * same cap, secret removal and masking as chat, but without the bulk that says nothing to a reader
 * and would fill the cap: a generated or uploaded image (`b64_json`, a `data:` URL, a long base64
 * string) becomes a short reference naming its type and size, and an embedding vector its
 * dimensions. URLs of images stay as they are (they are references already).
 */

/** Strings longer than this that look like base64 are replaced. */
const LONG_BASE64 = 2048;
const BASE64 = /^[A-Za-z0-9+/=\r\n]+$/;

const bytesOfBase64 = (s: string): number => Math.floor((s.replace(/[\r\n=]/g, "").length * 3) / 4);

function compactString(s: string): string {
  const data = /^data:([^;,]+)(;base64)?,/.exec(s);
  if (data && s.length > 512) return `[${data[1]} omitted: ${data[2] ? bytesOfBase64(s.slice(data[0].length)) : s.length - data[0].length} bytes]`;
  if (s.length > LONG_BASE64 && BASE64.test(s)) return `[base64 omitted: ${bytesOfBase64(s)} bytes]`;
  return s;
}

/** A body with images and vectors replaced by references (a copy; the input is not changed). */
export function compactBody(value: unknown, key = ""): unknown {
  if (typeof value === "string") return key === "b64_json" ? `[image omitted: ${bytesOfBase64(value)} bytes]` : compactString(value);
  if (Array.isArray(value)) {
    if (key === "embedding" && value.every((v) => typeof v === "number")) return { dimensions: value.length };
    return value.map((v) => compactBody(v));
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, compactBody(v, k)]));
  }
  return value;
}

/** What an error answer keeps as its body. */
export const errorBody = (o: { statusCode: number; errorType?: string | null; errorMessage?: string | null }) => ({
  error: { message: o.errorMessage ?? null, type: o.errorType ?? null, status: o.statusCode },
});

/** Narrowing helpers for upstream JSON (`unknown` in, typed values out; never `any`). */

export type JsonRecord = Record<string, unknown>;

export const isRecord = (v: unknown): v is JsonRecord => typeof v === "object" && v !== null && !Array.isArray(v);

export const asRecord = (v: unknown): JsonRecord => (isRecord(v) ? v : {});

export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A non-negative integer token count; anything else counts as 0. */
export const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** Parses JSON text; undefined when it is not valid JSON. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Text of an OpenAI message content (string or text parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .map((p) => (isRecord(p) && p.type === "text" && typeof p.text === "string" ? p.text : ""))
    .join("");
}

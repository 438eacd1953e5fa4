/**
 * OpenAI-format `content` as the providers send it: a string, or an array of parts. Mistral's
 * reasoning models (Magistral) send `{type: "thinking", thinking: [{type: "text", text}]}` and
 * `{type: "text", text}` parts, streamed and not; OpenAI's own parts are `text` and `refusal`;
 * some providers return `image_url` parts. Text parts are the answer, thinking parts its
 * reasoning; a part of another type is counted as `unknown`, so an answer made only of such parts
 * ends with an error rather than an empty success.
 */
import type { ImageOutput } from "../types";
import { asArray, asRecord, isRecord, str } from "../json";

export interface ContentPieces {
  text: string;
  reasoning: string;
  refusal: string;
  images: ImageOutput[];
  /** Types of the parts nothing above could take. */
  unknown: string[];
}

/** Text of a thinking part: a string, or an array of text parts (Mistral). */
function thinkingText(raw: unknown): string {
  if (typeof raw === "string") return raw;
  return asArray(raw).map((p) => (typeof p === "string" ? p : str(asRecord(p).text) ?? "")).join("");
}

export function contentPieces(content: unknown): ContentPieces {
  const out: ContentPieces = { text: "", reasoning: "", refusal: "", images: [], unknown: [] };
  if (typeof content === "string") {
    out.text = content;
    return out;
  }
  for (const raw of asArray(content)) {
    if (typeof raw === "string") {
      out.text += raw;
      continue;
    }
    const part = asRecord(raw);
    const type = str(part.type) ?? "";
    if ((type === "text" || type === "output_text") && typeof part.text === "string") out.text += part.text;
    else if (type === "thinking" || type === "reasoning") out.reasoning += thinkingText(part.thinking ?? part.reasoning ?? part.text);
    else if (type === "refusal") out.refusal += str(part.refusal) ?? "";
    else if (type === "image_url" && isRecord(part.image_url) && str(part.image_url.url)) out.images.push({ type: "image_url", image_url: { url: str(part.image_url.url) ?? "" } });
    else out.unknown.push(type || "(untyped)");
  }
  return out;
}

/** Whether a piece of content carries nothing the caller can use, only parts of unknown types. */
export const onlyUnknown = (p: ContentPieces): boolean =>
  p.unknown.length > 0 && !p.text && !p.reasoning && !p.refusal && p.images.length === 0;

/**
 * MCP `generate-nano-banana` (spec 4.3): an image from a Gemini-family image model, returned
 * inline, and saved to the `UPLOADS` R2 bucket under `${UPLOAD_DIR}/${filename}` only when the
 * deployment sets `UPLOAD_DIR` (contract section 1). Clients cannot enable saving or choose the
 * directory; they only name the file.
 */
import { badRequest } from "../errors/api-error";
import { fromBase64 } from "../lib/crypto";
import { GEMINI_ASPECT_SIZES } from "./providers/google";
import { generateImages, type GenerationDeps, type ImageGenerationResult, type ImageMetadata } from "./images";

export const NANO_BANANA_MODEL = "gemini-2.5-flash-image";
export const NANO_BANANA_ASPECT_RATIOS = ["1:1", "16:9", "4:3", "5:4"] as const;
export type NanoBananaAspectRatio = (typeof NANO_BANANA_ASPECT_RATIOS)[number];

export interface NanoBananaInput extends GenerationDeps {
  prompt: string;
  filename?: string;
  aspect_ratio?: string;
}

export interface NanoBananaResult {
  /** Base64 image bytes. */
  b64: string;
  mimeType: string;
  model: string;
  aspectRatio: NanoBananaAspectRatio;
  filename: string;
  /** Where the image was written, or null when saving is off (no UPLOAD_DIR). */
  saved: { bucket: "UPLOADS"; key: string; bytes: number } | null;
  text?: string;
  metadata: ImageMetadata;
  usage?: ImageGenerationResult["usage"];
}

const FILENAME_RE = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,199}$/;

/** A bare file name: no separators, no `..`, no control characters; `.png` added when missing. */
export function validateFilename(name: string | undefined, now = Date.now()): string {
  if (name === undefined || name === "") return `nano-banana-${now}.png`;
  if (/[\\/]/.test(name) || name.includes("..") || !FILENAME_RE.test(name)) {
    throw badRequest("filename must be a plain file name (letters, digits, '.', '_', '-', space; no path separators or '..').", "filename");
  }
  return /\.(png|jpe?g|webp)$/i.test(name) ? name : `${name}.png`;
}

export function validateAspectRatio(value: string | undefined): NanoBananaAspectRatio {
  if (value === undefined) return "1:1";
  const found = NANO_BANANA_ASPECT_RATIOS.find((r) => r === value);
  if (!found) throw badRequest(`aspect_ratio must be one of ${NANO_BANANA_ASPECT_RATIOS.join(", ")}.`, "aspect_ratio");
  return found;
}

/** `UPLOAD_DIR` as an R2 key prefix: trimmed of slashes, no `..` segments. */
function uploadPrefix(dir: string): string {
  const segments = dir.split("/").filter((s) => s && s !== ".");
  if (segments.some((s) => s === "..")) throw new Error("UPLOAD_DIR must not contain '..'");
  return segments.join("/");
}

export async function generateNanoBanana(input: NanoBananaInput): Promise<NanoBananaResult> {
  if (typeof input.prompt !== "string" || !input.prompt.trim()) throw badRequest("'prompt' is required.", "prompt");
  const filename = validateFilename(input.filename);
  const aspectRatio = validateAspectRatio(input.aspect_ratio);
  const result = await generateImages({
    ...input,
    body: { prompt: input.prompt, model: NANO_BANANA_MODEL, size: GEMINI_ASPECT_SIZES[aspectRatio], n: 1, aspect_ratio: aspectRatio, response_format: "b64_json" },
  });
  const b64 = result.data[0]?.b64_json;
  if (!b64) throw new Error("image generation returned no image");
  const mimeType = result.mimeTypes[0] ?? "image/png";

  let saved: NanoBananaResult["saved"] = null;
  const dir = input.env.UPLOAD_DIR;
  if (dir) {
    const prefix = uploadPrefix(dir);
    const key = prefix ? `${prefix}/${filename}` : filename;
    const bytes = fromBase64(b64);
    await input.env.UPLOADS.put(key, bytes, { httpMetadata: { contentType: mimeType } });
    saved = { bucket: "UPLOADS", key, bytes: bytes.byteLength };
  }
  const out: NanoBananaResult = { b64, mimeType, model: result.model, aspectRatio, filename, saved, metadata: result.metadata, usage: result.usage };
  if (result.text) out.text = result.text;
  return out;
}

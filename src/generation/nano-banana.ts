/**
 * MCP `generate-nano-banana` (spec 4.3): an image from a Gemini-family image model, returned
 * inline, and saved to the `UPLOADS` R2 bucket under `${UPLOAD_DIR}/${filename}` only when the
 * deployment sets `UPLOAD_DIR` (contract section 1). Clients cannot enable saving or choose the
 * directory; they only name the file.
 */
import * as z from "zod";
import { badRequest } from "../errors/api-error";
import { storageCostPico } from "../billing/storage";
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

const FILENAME_MESSAGE =
  "filename must be a plain file name: 1 to 200 letters, digits, '.', '_', '-' or spaces, not starting with '.' or a space, without '..' or path separators.";

/**
 * THE filename rule, shared by the MCP tool schema and the check below (one rule, so the schema
 * never accepts a name the tool then refuses): letters, digits, `.`, `_`, `-`, space; the first
 * character not `.` or space (no hidden files); no `..`; therefore no path separators.
 */
export const nanoBananaFilename = z
  .string()
  .max(200, FILENAME_MESSAGE)
  .regex(/^[A-Za-z0-9_-][A-Za-z0-9._ -]*$/, FILENAME_MESSAGE)
  .refine((s) => !s.includes(".."), FILENAME_MESSAGE);

/** A bare file name per `nanoBananaFilename`; `.png` added when missing. */
export function validateFilename(name: string | undefined, now = Date.now()): string {
  if (name === undefined || name === "") return `nano-banana-${now}.png`;
  if (!nanoBananaFilename.safeParse(name).success) throw badRequest(FILENAME_MESSAGE, "filename");
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
  let saved: NanoBananaResult["saved"] = null;
  const dir = input.env.UPLOAD_DIR;
  // Saved before the request is logged, so the log row carries the storage cost.
  const persist = dir
    ? async (image: { b64: string; mimeType: string }) => {
        const prefix = uploadPrefix(dir);
        const key = prefix ? `${prefix}/${filename}` : filename;
        const bytes = fromBase64(image.b64);
        await input.env.UPLOADS.put(key, bytes, { httpMetadata: { contentType: image.mimeType } });
        saved = { bucket: "UPLOADS", key, bytes: bytes.byteLength };
        return { storagePico: storageCostPico(bytes.byteLength) };
      }
    : undefined;
  const result = await generateImages({
    ...input,
    body: { prompt: input.prompt, model: NANO_BANANA_MODEL, size: GEMINI_ASPECT_SIZES[aspectRatio], n: 1, aspect_ratio: aspectRatio, response_format: "b64_json" },
    ...(persist ? { persist } : {}),
  });
  const b64 = result.data[0]?.b64_json;
  if (!b64) throw new Error("image generation returned no image");
  const mimeType = result.mimeTypes[0] ?? "image/png";

  const out: NanoBananaResult = { b64, mimeType, model: result.model, aspectRatio, filename, saved, metadata: result.metadata, usage: result.usage };
  if (result.text) out.text = result.text;
  return out;
}

/**
 * Image generation wire formats. One module per upstream API; the registry (index.ts) maps a
 * provider id to its adapter. Adapters only build requests and parse responses: credentials,
 * routing, billing and logging live in src/generation/images.ts.
 */
import type { UpstreamCredential } from "../credentials";

export interface ImageUpstreamRequest {
  prompt: string;
  /** The provider's model id (catalogue `externalId`). */
  externalModel: string;
  /** `WIDTHxHEIGHT`, already validated against the model's sizes, or `auto` where `autoSize` is set. */
  size: string;
  n: number;
  /** Aspect ratio for APIs that take one instead of a size (Gemini). */
  aspectRatio?: string;
}

export interface GeneratedImage {
  b64?: string;
  url?: string;
  mimeType: string;
  revisedPrompt?: string;
}

export interface ImageUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input split by modality where the upstream reports it (OpenAI `input_tokens_details`). */
  inputTextTokens?: number;
  inputImageTokens?: number;
}

export interface ImageUpstreamResult {
  images: GeneratedImage[];
  usage: ImageUsage | null;
  /** Text the model returned alongside the image (Gemini), if any. */
  text?: string;
}

export interface ImageAdapter {
  /** Sizes the upstream accepts when the catalogue does not list them (no `per_image` map). */
  sizes: readonly string[];
  /** Whether the upstream takes `size: "auto"` itself; others get `defaultSize` for `auto`. */
  autoSize?: boolean;
  /** Whether one upstream call yields `n` images; otherwise the caller repeats the call `n` times. */
  supportsN: boolean;
  request(req: ImageUpstreamRequest, cred: UpstreamCredential): { url: string; init: RequestInit };
  /** Parses a 2xx body; throws MalformedUpstreamError when it has no image. */
  parse(body: unknown): ImageUpstreamResult;
}

/**
 * Image sizes and prices, pure: the sizes a mapping accepts, the size sent upstream, the admission
 * bound and the billed cost of a generation (src/generation/images.ts).
 */
import * as z from "zod";
import type { ProviderMapping } from "../catalog/types";
import { maxPico, parseUsd, type Pico } from "../billing/money";
import type { ImageAdapter, ImageUsage } from "./providers/types";

/**
 * A requested size: `WIDTHxHEIGHT` or `auto` (upstreamSize says what `auto` becomes). One schema
 * for every front door that takes a size (the images route, the MCP generate-image tool).
 */
export const imageSizeSchema = z.union([z.literal("auto"), z.string().regex(/^\d{2,5}x\d{2,5}$/, "expected WIDTHxHEIGHT (e.g. 1024x1024) or auto")]);

/** The size asked when the request names none. */
export const DEFAULT_IMAGE_SIZE = "1024x1024";

/** Sizes a mapping accepts: the catalogue's priced sizes plus the wire format's own. */
export function sizesFor(mapping: ProviderMapping, adapter: ImageAdapter): string[] {
  return [...new Set([...Object.keys(mapping.pricing.per_image ?? {}), ...adapter.sizes])];
}

/**
 * The size sent upstream: `auto` goes on to APIs that take it and becomes the provider's default
 * size elsewhere (the gateway's default when the provider offers it, else its first size).
 */
export function upstreamSize(adapter: ImageAdapter, size: string): string {
  if (size !== "auto" || adapter.autoSize) return size;
  return adapter.sizes.includes(DEFAULT_IMAGE_SIZE) ? DEFAULT_IMAGE_SIZE : (adapter.sizes[0] ?? DEFAULT_IMAGE_SIZE);
}

const price = (v: string | undefined): Pico => (v ? parseUsd(v) : 0n);

function maxPerImage(mapping: ProviderMapping): Pico | null {
  const values = Object.values(mapping.pricing.per_image ?? {});
  return values.length ? values.map((v) => parseUsd(v)).reduce(maxPico, 0n) : null;
}

const outputTokenPrice = (m: ProviderMapping): Pico => price(m.pricing.image_output ?? m.pricing.completion);

/** What `n` images of `size` can cost on this mapping, for the reservation (upper bound). */
export function estimateImageCost(mapping: ProviderMapping, size: string, n: number, promptChars: number): Pico {
  const perImage = mapping.pricing.per_image?.[size];
  const fee = price(mapping.pricing.request);
  if (perImage !== undefined) return parseUsd(perImage) * BigInt(n) + fee;
  // Image models emit a fixed number of tokens per image, which the listed per-image prices
  // reflect; without any listed price the mapping's output cap bounds the tokens.
  const promptCost = price(mapping.pricing.prompt) * BigInt(Math.ceil(promptChars / 2));
  const flat = maxPerImage(mapping);
  const perImageBound = flat ?? outputTokenPrice(mapping) * BigInt(Math.max(mapping.maxOutput, 1));
  return (perImageBound + promptCost) * BigInt(n) + fee;
}

/**
 * Exact cost: the catalogue's per-image price for the size when it lists one; otherwise the
 * reported tokens at the mapping's token prices; otherwise the highest listed per-image price.
 */
export function imageCost(mapping: ProviderMapping, size: string, images: number, usage: ImageUsage | null): Pico {
  const fee = price(mapping.pricing.request);
  const perImage = mapping.pricing.per_image?.[size];
  if (perImage !== undefined) return parseUsd(perImage) * BigInt(images) + fee;
  if (usage) return price(mapping.pricing.prompt) * BigInt(usage.inputTokens) + outputTokenPrice(mapping) * BigInt(usage.outputTokens) + fee;
  return (maxPerImage(mapping) ?? 0n) * BigInt(images) + fee;
}

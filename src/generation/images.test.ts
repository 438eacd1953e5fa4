import { describe, expect, it } from "vitest";
import { mappingFor } from "../catalog";
import { estimateImageCost, imageCost, resolveImageRequest } from "./images";
import { validateFilename } from "./nano-banana";

describe("image pricing", () => {
  const gptImage = mappingFor("gpt-image-1", "openai")!;
  const gemini = mappingFor("gemini-2.5-flash-image", "google-ai-studio")!;

  it("uses the catalogue's per-image price for the size", () => {
    expect(imageCost(gptImage, "1536x1024", 3, null)).toBe(189_000_000_000n);
    expect(estimateImageCost(gptImage, "1024x1024", 2, 100)).toBe(84_000_000_000n);
  });

  it("falls back to reported tokens for unlisted sizes, else the highest per-image price", () => {
    // 1290 output tokens at $30/M + 10 prompt tokens at $0.30/M.
    expect(imageCost(gemini, "1344x768", 1, { inputTokens: 10, outputTokens: 1290 })).toBe(38_703_000_000n);
    expect(imageCost(gemini, "1344x768", 2, null)).toBe(78_000_000_000n);
    expect(estimateImageCost(gemini, "1344x768", 1, 10)).toBeGreaterThanOrEqual(imageCost(gemini, "1344x768", 1, { inputTokens: 5, outputTokens: 1290 }));
  });
});

describe("resolveImageRequest", () => {
  it("applies the defaults", () => {
    const r = resolveImageRequest({ prompt: "x" });
    expect(r.model.id).toBe("qwen-image-3.0");
    expect(r.size).toBe("1024x1024");
    expect(r.n).toBe(1);
    expect(r.candidates.map((c) => c.mapping.providerId)).toEqual(["alibaba"]);
  });

  it("keeps only providers with an image wire format", () => {
    const r = resolveImageRequest({ prompt: "x", model: "nano-banana" });
    expect(r.candidates.map((c) => c.mapping.providerId)).toEqual(["google-ai-studio"]);
  });
});

describe("validateFilename", () => {
  it("accepts plain names and adds .png", () => {
    expect(validateFilename("cat")).toBe("cat.png");
    expect(validateFilename("cat.webp")).toBe("cat.webp");
    expect(validateFilename(undefined, 42)).toBe("nano-banana-42.png");
  });
  it("rejects traversal and separators", () => {
    for (const bad of ["../x.png", "a/b", "a\\\\b", "x..png", "\u0000a"]) {
      expect(() => validateFilename(bad)).toThrow();
    }
  });
});

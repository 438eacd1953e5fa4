/**
 * Gemini API image output: `POST {base}/v1beta/models/{model}:generateContent` (`x-goog-api-key`)
 * with `generationConfig.responseModalities: ["IMAGE"]` and `imageConfig.aspectRatio`; images come
 * back as `candidates[].content.parts[].inlineData {mimeType, data}`. One image per call.
 */
import { asArray, asRecord, count, isRecord, str } from "../../providers/json";
import { malformed } from "../../providers/errors";
import { joinUrl } from "../credentials";
import type { GeneratedImage, ImageAdapter } from "./types";

/** Output sizes of Gemini 2.5 Flash Image by aspect ratio (Gemini API image generation guide). */
export const GEMINI_ASPECT_SIZES: Readonly<Record<string, string>> = {
  "1:1": "1024x1024",
  "2:3": "832x1248",
  "3:2": "1248x832",
  "3:4": "864x1184",
  "4:3": "1184x864",
  "4:5": "896x1152",
  "5:4": "1152x896",
  "9:16": "768x1344",
  "16:9": "1344x768",
  "21:9": "1536x672",
};

export const aspectRatioForSize = (size: string): string | undefined =>
  Object.entries(GEMINI_ASPECT_SIZES).find(([, s]) => s === size)?.[0];

export const googleImageAdapter: ImageAdapter = {
  sizes: Object.values(GEMINI_ASPECT_SIZES),
  supportsN: false,
  request(req, cred) {
    const aspectRatio = req.aspectRatio ?? aspectRatioForSize(req.size) ?? "1:1";
    return {
      url: joinUrl(cred.baseUrl, `/v1beta/models/${encodeURIComponent(req.externalModel)}:generateContent`),
      init: {
        method: "POST",
        headers: { "x-goog-api-key": cred.apiKey, "content-type": "application/json" },
        body: JSON.stringify({
          contents: [{ role: "user", parts: [{ text: req.prompt }] }],
          generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio } },
        }),
      },
    };
  },
  parse(body) {
    const root = asRecord(body);
    const images: GeneratedImage[] = [];
    let text = "";
    for (const cand of asArray(root.candidates)) {
      for (const part of asArray(asRecord(asRecord(cand).content).parts)) {
        if (!isRecord(part)) continue;
        const inline = asRecord(part.inlineData ?? part.inline_data);
        const data = str(inline.data);
        if (data) images.push({ b64: data, mimeType: str(inline.mimeType) ?? str(inline.mime_type) ?? "image/png" });
        const t = str(part.text);
        if (t) text += t;
      }
    }
    if (!images.length) throw malformed("no inlineData image in candidates[].content.parts[]");
    const meta = asRecord(root.usageMetadata);
    const usage = isRecord(root.usageMetadata)
      ? { inputTokens: count(meta.promptTokenCount), outputTokens: count(meta.candidatesTokenCount) }
      : null;
    return text ? { images, usage, text } : { images, usage };
  },
};

/**
 * OpenAI Images API: `POST {base}/images/generations` with `{model, prompt, n, size}`.
 * GPT image models always answer `b64_json` (and reject `response_format`); DALL·E models answer
 * `url` by default. Usage (GPT image models) is `{input_tokens, output_tokens, ...}`.
 */
import { asArray, asRecord, count, isRecord, str } from "../../providers/json";
import { malformed } from "../../providers/errors";
import { joinUrl } from "../credentials";
import type { GeneratedImage, ImageAdapter, ImageUsage } from "./types";

export const openaiImageAdapter: ImageAdapter = {
  sizes: ["1024x1024", "1536x1024", "1024x1536"],
  autoSize: true,
  supportsN: true,
  request(req, cred) {
    return {
      url: joinUrl(cred.baseUrl, "/images/generations"),
      init: {
        method: "POST",
        headers: { authorization: `Bearer ${cred.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: req.externalModel, prompt: req.prompt, n: req.n, size: req.size }),
      },
    };
  },
  parse(body) {
    const root = asRecord(body);
    const images: GeneratedImage[] = [];
    for (const item of asArray(root.data)) {
      if (!isRecord(item)) continue;
      const b64 = str(item.b64_json);
      const url = str(item.url);
      if (!b64 && !url) continue;
      const img: GeneratedImage = { mimeType: `image/${str(root.output_format) ?? "png"}` };
      if (b64) img.b64 = b64;
      if (url) img.url = url;
      const revised = str(item.revised_prompt);
      if (revised) img.revisedPrompt = revised;
      images.push(img);
    }
    if (!images.length) throw malformed("no image in data[]");
    if (!isRecord(root.usage)) return { images, usage: null };
    const details = asRecord(root.usage.input_tokens_details);
    const usage: ImageUsage = { inputTokens: count(root.usage.input_tokens), outputTokens: count(root.usage.output_tokens) };
    if (isRecord(root.usage.input_tokens_details)) {
      usage.inputTextTokens = count(details.text_tokens);
      usage.inputImageTokens = count(details.image_tokens);
    }
    return { images, usage };
  },
};

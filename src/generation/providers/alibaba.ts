/**
 * Alibaba Cloud Model Studio (DashScope) native image API, synchronous call:
 * `POST {origin}/api/v1/services/aigc/multimodal-generation/generation`
 * `{model, input:{messages:[{role:"user",content:[{text}]}]}, parameters:{size:"W*H", n, watermark, prompt_extend}}`
 * -> `{output:{choices:[{message:{content:[{image:"https://..."}]}}]}, usage:{image_count,width,height}, request_id}`.
 * The provider's base is the OpenAI-compatible `.../compatible-mode/v1`; the native API lives on
 * the same origin, so that suffix is dropped (an `ALIBABA_BASE_URL` override is used as is).
 */
import { asArray, asRecord, isRecord, str } from "../../providers/json";
import { malformed } from "../../providers/errors";
import { joinUrl } from "../credentials";
import type { GeneratedImage, ImageAdapter } from "./types";

const nativeBase = (base: string): string => base.replace(/\/compatible-mode\/v1\/?$/, "");

export const alibabaImageAdapter: ImageAdapter = {
  sizes: ["1024x1024", "1328x1328", "1664x928", "928x1664", "1472x1104", "1104x1472", "1536x1024", "1024x1536"],
  supportsN: true,
  request(req, cred) {
    return {
      url: joinUrl(nativeBase(cred.baseUrl), "/api/v1/services/aigc/multimodal-generation/generation"),
      init: {
        method: "POST",
        headers: { authorization: `Bearer ${cred.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: req.externalModel,
          input: { messages: [{ role: "user", content: [{ text: req.prompt }] }] },
          parameters: { size: req.size.replace("x", "*"), n: req.n, watermark: false, prompt_extend: true },
        }),
      },
    };
  },
  parse(body) {
    const output = asRecord(asRecord(body).output);
    const images: GeneratedImage[] = [];
    for (const choice of asArray(output.choices)) {
      const content = asArray(asRecord(asRecord(choice).message).content);
      for (const part of content) {
        if (!isRecord(part)) continue;
        const url = str(part.image);
        if (url) images.push({ url, mimeType: "image/png" });
      }
    }
    if (!images.length) throw malformed("no image in output.choices[].message.content[]");
    // DashScope bills images by count (usage.image_count), not tokens.
    return { images, usage: null };
  },
};

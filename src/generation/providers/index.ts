/** Provider id -> image wire format. A provider without an entry cannot serve image models. */
import type { ProviderId } from "../../catalog/types";
import type { ImageAdapter } from "./types";
import { openaiImageAdapter } from "./openai";
import { alibabaImageAdapter } from "./alibaba";
import { googleImageAdapter } from "./google";

const IMAGE_ADAPTERS: Partial<Record<ProviderId, ImageAdapter>> = {
  openai: openaiImageAdapter,
  alibaba: alibabaImageAdapter,
  "google-ai-studio": googleImageAdapter,
};

export const imageAdapterFor = (providerId: string): ImageAdapter | undefined =>
  (IMAGE_ADAPTERS as Record<string, ImageAdapter | undefined>)[providerId];

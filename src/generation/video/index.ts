/** Provider id -> video wire format. */
import type { ProviderId } from "../../catalog/types";
import type { VideoAdapter } from "./types";
import { openaiVideoAdapter } from "./openai";

const VIDEO_ADAPTERS: Partial<Record<ProviderId, VideoAdapter>> = {
  openai: openaiVideoAdapter,
};

export const videoAdapterFor = (providerId: string): VideoAdapter | undefined =>
  (VIDEO_ADAPTERS as Record<string, VideoAdapter | undefined>)[providerId];

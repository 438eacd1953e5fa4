// @ts-check
/**
 * Registry of fake upstream handlers (first match wins). Each module exports a `FakeRoute[]`.
 * Add one import + spread per module; keep provider behaviour inside its module.
 */
import { anthropicRoutes } from "./anthropic.mjs";
import { bedrockRoutes } from "./bedrock.mjs";
import { googleRoutes } from "./google.mjs";
import { googleOAuthRoutes } from "./google-oauth.mjs";
import { openaiRoutes } from "./openai.mjs";
import { imageRoutes } from "./images.mjs";
import { videoRoutes } from "./videos.mjs";
import { moderationRoutes } from "./moderation.mjs";
import { faultRoutes } from "./faults.mjs";
import { embeddingRoutes } from "./embeddings.mjs";
import { receiverRoutes } from "./receivers.mjs";

/** @type {import("./server.mjs").FakeRoute[]} */
export const routes = [
  // routes:begin
  ...receiverRoutes,
  ...faultRoutes,
  ...moderationRoutes,
  ...embeddingRoutes,
  ...imageRoutes,
  ...videoRoutes,
  ...anthropicRoutes,
  ...googleRoutes,
  ...googleOAuthRoutes,
  ...bedrockRoutes,
  ...openaiRoutes,
  // routes:end
];

/**
 * Each tool's title and description, as `tools/list` gives them and the `/mcp` setup page lists them
 * (src/mcp/info.ts): one text for both, so the page never drifts from what clients see.
 */

/** Every tool the MCP server registers (src/mcp/server.ts). */
export const TOOL_NAMES = [
  "get-account",
  "get-usage",
  "get-usage-breakdown",
  "chat",
  "generate-image",
  "generate-nano-banana",
  "list-models",
  "list-image-models",
] as const;

/** What generate-image uses when the caller names no model or size. */
export const IMAGE_DEFAULTS = { model: "qwen-image-3.0", size: "1024x1024" } as const;

export const TOOL_TEXT: Record<(typeof TOOL_NAMES)[number], { title: string; description: string }> = {
  "get-account": {
    title: "Account",
    description:
      "The connected user, organization, project, role, analytics scope and the API key's spending limits. Owners and admins also see the organization's credit balance. Never returns credentials.",
  },
  "get-usage": {
    title: "Usage",
    description:
      "Usage of the connected scope over a UTC date range: totals (requests, tokens, errors, cache hits, costs split into credits and BYOK, data storage), a time series of active buckets, and the most used provider, model and app. Statistics from hourly aggregates, not invoice totals; recent requests may lag.",
  },
  "get-usage-breakdown": {
    title: "Usage breakdown",
    description:
      "Ranks providers, models, apps or API keys of the connected scope by requests, cost or tokens over a UTC date range, with pagination. `unknown` stands for requests without a recorded source app.",
  },
  "list-models": {
    title: "List models",
    description:
      "Language models of the catalogue with capabilities and pricing (USD per token). Deactivated models are left out unless asked for.",
  },
  "list-image-models": {
    title: "List image models",
    description:
      "Image generation models usable with generate-image and generate-nano-banana, with sizes and prices.",
  },
  "chat": {
    title: "Chat",
    description:
      "Runs a chat completion with any model of the catalogue (see list-models) through the gateway, charged to the connected key; spend limits and access rules apply.",
  },
  "generate-image": {
    title: "Generate image",
    description:
      `Generates images from a text prompt (default model ${IMAGE_DEFAULTS.model}, size ${IMAGE_DEFAULTS.size}, 1 to 4 images). Charged like the images API; spend limits apply.`,
  },
  "generate-nano-banana": {
    title: "Generate image (Nano Banana)",
    description:
      "Generates an image with Google's Gemini image model (Nano Banana) and returns it inline. It is saved to storage only when the server operator configured UPLOAD_DIR; clients cannot enable saving.",
  },
};

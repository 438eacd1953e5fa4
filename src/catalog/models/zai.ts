import type { ModelDefinition } from "../types";
import { hosts, JSON_ONLY, mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "glm", maker: "zai", kind: "chat", inputModalities: ["text"], outputModalities: ["text"], tokenizer: "glm" } as const;
const CHAT = { ...TOOLS, ...JSON_ONLY, reasoning: true, reasoningModes: ["standard"] } as const;

export const ZAI_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "glm-4.6",
    name: "GLM-4.6",
    description: "Z.ai's flagship agentic coding and reasoning model with a 200K context.",
    created: released("2025-09-30"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "zai", externalId: "glm-4.6", pricing: priced("0.60", "2.20", { cacheRead: "0.11" }), contextLength: 200_000, maxOutput: 128_000, ...CHAT }),
      ...hosts(CHAT, [
        ["cerebras", "zai-glm-4.6", "2.25", "2.75", 131_072, 40_000],
        ["fireworks", "accounts/fireworks/models/glm-4p6", "0.55", "2.19", 202_752, 32_768],
        ["deepinfra", "zai-org/GLM-4.6", "0.60", "1.90", 202_752, 32_768],
        ["novita", "zai-org/glm-4.6", "0.60", "2.20", 204_800, 131_072],
      ]),
    ],
  },
  {
    ...base,
    id: "glm-4.5",
    name: "GLM-4.5",
    description: "Z.ai's 355B MoE hybrid reasoning model.",
    created: released("2025-07-28"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "zai", externalId: "glm-4.5", pricing: priced("0.60", "2.20", { cacheRead: "0.11" }), contextLength: 131_072, maxOutput: 98_304, ...CHAT }),
      ...hosts(CHAT, [["fireworks", "accounts/fireworks/models/glm-4p5", "0.55", "2.19", 131_072, 32_768]]),
    ],
  },
  {
    ...base,
    id: "glm-4.5-air",
    name: "GLM-4.5-Air",
    description: "Compact GLM-4.5 (106B MoE) for cost-sensitive agents.",
    created: released("2025-07-28"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "zai", externalId: "glm-4.5-air", pricing: priced("0.20", "1.10", { cacheRead: "0.03" }), contextLength: 131_072, maxOutput: 98_304, ...CHAT }),
      ...hosts(CHAT, [["together-ai", "zai-org/GLM-4.5-Air-FP8", "0.20", "1.10", 131_072, 32_768]]),
    ],
  },
  {
    ...base,
    id: "glm-4.5-flash",
    name: "GLM-4.5-Flash",
    description: "Z.ai's free GLM-4.5 tier model.",
    created: released("2025-07-28"),
    free: true,
    stability: "stable",
    mappings: [mapping({ providerId: "zai", externalId: "glm-4.5-flash", pricing: { prompt: "0", completion: "0" }, contextLength: 131_072, maxOutput: 98_304, ...CHAT })],
  },
  {
    ...base,
    id: "glm-4.5v",
    name: "GLM-4.5V",
    description: "Z.ai's vision-language reasoning model.",
    inputModalities: ["text", "image", "video"],
    created: released("2025-08-11"),
    stability: "stable",
    mappings: [mapping({ providerId: "zai", externalId: "glm-4.5v", pricing: priced("0.60", "1.80", { cacheRead: "0.11" }), contextLength: 65_536, maxOutput: 16_384, vision: true, ...CHAT })],
  },
];

import type { ModelDefinition } from "../types";
import { hosts, JSON_ONLY, mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "kimi", maker: "moonshot", kind: "chat", inputModalities: ["text"], outputModalities: ["text"], tokenizer: "kimi" } as const;

export const MOONSHOT_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "kimi-k2",
    name: "Kimi K2 (0905)",
    description: "Moonshot's 1T-parameter MoE model for agentic coding and tool use.",
    aliases: ["kimi-k2-0905", "kimi-k2-instruct-0905", "kimi-k2-0905-preview"],
    created: released("2025-09-05"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "moonshot", externalId: "kimi-k2-0905-preview", pricing: priced("0.60", "2.50", { cacheRead: "0.15" }), contextLength: 262_144, maxOutput: 32_768, ...TOOLS, ...JSON_ONLY }),
      ...hosts({ ...TOOLS, ...JSON_ONLY }, [
        ["groq", "moonshotai/kimi-k2-instruct-0905", "1", "3", 262_144, 16_384],
        ["together-ai", "moonshotai/Kimi-K2-Instruct-0905", "1", "3", 262_144, 32_768],
        ["fireworks", "accounts/fireworks/models/kimi-k2-instruct-0905", "0.60", "2.50", 262_144, 32_768],
        ["deepinfra", "moonshotai/Kimi-K2-Instruct-0905", "0.50", "2", 262_144, 32_768],
        ["novita", "moonshotai/kimi-k2-0905", "0.60", "2.50", 262_144, 32_768],
      ]),
    ],
  },
  {
    ...base,
    id: "kimi-k2-thinking",
    name: "Kimi K2 Thinking",
    description: "Moonshot's open reasoning agent model with long-horizon tool use.",
    created: released("2025-11-06"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "moonshot", externalId: "kimi-k2-thinking", pricing: priced("0.60", "2.50", { cacheRead: "0.15" }), contextLength: 262_144, maxOutput: 65_536, ...TOOLS, ...JSON_ONLY, reasoning: true }),
      ...hosts({ ...TOOLS, ...JSON_ONLY, reasoning: true }, [["together-ai", "moonshotai/Kimi-K2-Thinking", "1.20", "4", 262_144, 65_536]]),
    ],
  },
];

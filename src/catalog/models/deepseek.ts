import type { ModelDefinition } from "../types";
import { hosts, JSON_ONLY, mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "deepseek", maker: "deepseek", kind: "chat", inputModalities: ["text"], outputModalities: ["text"], tokenizer: "deepseek" } as const;

export const DEEPSEEK_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "deepseek-v3.2",
    name: "DeepSeek V3.2",
    description: "DeepSeek V3.2 with sparse attention, non-thinking mode (`deepseek-chat`).",
    aliases: ["deepseek-chat", "deepseek-v3.2-exp"],
    created: released("2025-09-29"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "deepseek", externalId: "deepseek-chat", pricing: priced("0.28", "0.42", { cacheRead: "0.028" }), contextLength: 131_072, maxOutput: 8_192, ...TOOLS, ...JSON_ONLY, minCacheableTokens: 64 }),
      ...hosts({ ...TOOLS, ...JSON_ONLY }, [["novita", "deepseek/deepseek-v3.2-exp", "0.27", "0.41", 163_840, 32_768]]),
    ],
  },
  {
    ...base,
    id: "deepseek-reasoner",
    name: "DeepSeek V3.2 (thinking)",
    description: "DeepSeek V3.2 in thinking mode, returning reasoning_content.",
    aliases: ["deepseek-v3.2-thinking"],
    created: released("2025-09-29"),
    stability: "stable",
    mappings: [
      mapping({ providerId: "deepseek", externalId: "deepseek-reasoner", pricing: priced("0.28", "0.42", { cacheRead: "0.028" }), contextLength: 131_072, maxOutput: 65_536, ...TOOLS, ...JSON_ONLY, reasoning: true, reasoningModes: ["standard"], minCacheableTokens: 64 }),
    ],
  },
  {
    ...base,
    id: "deepseek-v3.1",
    name: "DeepSeek V3.1",
    description: "Hybrid thinking/non-thinking DeepSeek model (open weights).",
    aliases: ["deepseek-v3.1-terminus"],
    created: released("2025-08-21"),
    stability: "stable",
    mappings: hosts({ ...TOOLS, ...JSON_ONLY, reasoning: true }, [
      ["together-ai", "deepseek-ai/DeepSeek-V3.1", "0.60", "1.70", 131_072, 32_768],
      ["fireworks", "accounts/fireworks/models/deepseek-v3p1", "0.56", "1.68", 163_840, 32_768],
      ["deepinfra", "deepseek-ai/DeepSeek-V3.1", "0.27", "1.00", 163_840, 32_768],
      ["novita", "deepseek/deepseek-v3.1", "0.27", "1.00", 131_072, 32_768],
    ]),
  },
  {
    ...base,
    id: "deepseek-r1",
    name: "DeepSeek R1 (0528)",
    description: "DeepSeek's open reasoning model, May 2025 revision.",
    aliases: ["deepseek-r1-0528"],
    created: released("2025-05-28"),
    stability: "stable",
    mappings: hosts({ ...JSON_ONLY, tools: true, reasoning: true }, [
      ["together-ai", "deepseek-ai/DeepSeek-R1", "3", "7", 163_840, 32_768],
      ["fireworks", "accounts/fireworks/models/deepseek-r1-0528", "1.35", "5.40", 163_840, 32_768],
      ["deepinfra", "deepseek-ai/DeepSeek-R1-0528", "0.50", "2.15", 163_840, 32_768],
      ["novita", "deepseek/deepseek-r1-0528", "0.70", "2.50", 163_840, 32_768],
      ["nebius", "deepseek-ai/DeepSeek-R1-0528", "0.80", "2.40", 163_840, 32_768],
    ]),
  },
];

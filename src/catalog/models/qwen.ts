import type { ModelDefinition } from "../types";
import { hosts, JSON_ALL, JSON_ONLY, mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "qwen", maker: "alibaba", kind: "chat", inputModalities: ["text"], outputModalities: ["text"], tokenizer: "qwen" } as const;
const CHAT = { ...TOOLS, ...JSON_ALL } as const;

/** Alibaba Model Studio (international, Singapore) prices for the lowest input tier. */
export const QWEN_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "qwen3-max",
    name: "Qwen3 Max",
    description: "Alibaba's flagship Qwen3 model (prices for prompts up to 32K tokens).",
    aliases: ["qwen3-max-2025-09-23"],
    created: released("2025-09-24"),
    stability: "stable",
    mappings: [mapping({ providerId: "alibaba", externalId: "qwen3-max", pricing: priced("1.20", "6", { cacheRead: "0.24" }), contextLength: 262_144, maxOutput: 65_536, ...CHAT })],
  },
  {
    ...base,
    id: "qwen-plus",
    name: "Qwen Plus",
    description: "Balanced Qwen model with optional thinking.",
    created: released("2025-07-28"),
    stability: "stable",
    mappings: [mapping({ providerId: "alibaba", externalId: "qwen-plus", pricing: priced("0.40", "1.20"), contextLength: 1_000_000, maxOutput: 32_768, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "qwen-flash",
    name: "Qwen Flash",
    description: "Fast, low-cost Qwen model.",
    created: released("2025-07-28"),
    stability: "stable",
    mappings: [mapping({ providerId: "alibaba", externalId: "qwen-flash", pricing: priced("0.05", "0.40"), contextLength: 1_000_000, maxOutput: 32_768, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "qwen3-coder-plus",
    name: "Qwen3 Coder Plus",
    description: "Alibaba's hosted agentic coding model.",
    created: released("2025-07-22"),
    stability: "stable",
    mappings: [mapping({ providerId: "alibaba", externalId: "qwen3-coder-plus", pricing: priced("1", "5"), contextLength: 1_000_000, maxOutput: 65_536, ...CHAT })],
  },
  {
    ...base,
    id: "qwen3-235b-a22b-instruct-2507",
    name: "Qwen3 235B A22B Instruct 2507",
    description: "Open-weight Qwen3 MoE instruct model (July 2025).",
    aliases: ["qwen3-235b-a22b-2507"],
    created: released("2025-07-21"),
    stability: "stable",
    mappings: hosts({ ...TOOLS, ...JSON_ONLY }, [
      ["alibaba", "qwen3-235b-a22b-instruct-2507", "0.70", "2.80", 131_072, 32_768],
      ["together-ai", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput", "0.20", "0.60", 262_144, 32_768],
      ["fireworks", "accounts/fireworks/models/qwen3-235b-a22b-instruct-2507", "0.22", "0.88", 262_144, 32_768],
      ["cerebras", "qwen-3-235b-a22b-instruct-2507", "0.60", "1.20", 131_072, 32_768],
      ["deepinfra", "Qwen/Qwen3-235B-A22B-Instruct-2507", "0.09", "0.55", 262_144, 32_768],
      ["novita", "qwen/qwen3-235b-a22b-instruct-2507", "0.09", "0.58", 131_072, 16_384],
      ["nebius", "Qwen/Qwen3-235B-A22B-Instruct-2507", "0.20", "0.60", 262_144, 32_768],
    ]),
  },
  {
    ...base,
    id: "qwen3-coder-480b-a35b-instruct",
    name: "Qwen3 Coder 480B A35B",
    description: "Open-weight Qwen3 coding MoE for agentic software engineering.",
    aliases: ["qwen3-coder"],
    created: released("2025-07-22"),
    stability: "stable",
    mappings: hosts({ ...TOOLS, ...JSON_ONLY }, [
      ["together-ai", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "2", "2", 262_144, 32_768],
      ["fireworks", "accounts/fireworks/models/qwen3-coder-480b-a35b-instruct", "0.45", "1.80", 262_144, 32_768],
      ["deepinfra", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "0.40", "1.60", 262_144, 32_768],
      ["novita", "qwen/qwen3-coder-480b-a35b-instruct", "0.29", "1.20", 262_144, 65_536],
    ]),
  },
  {
    id: "qwen-image-3.0",
    name: "Qwen Image 3.0",
    description: "Alibaba's text-to-image model with strong text rendering; the gateway's default image model.",
    family: "qwen-image",
    maker: "alibaba",
    aliases: ["qwen-image"],
    kind: "image",
    created: released("2026-09-01"),
    inputModalities: ["text"],
    outputModalities: ["image"],
    tokenizer: "qwen",
    stability: "stable",
    supportedParameters: ["prompt", "size", "n", "negative_prompt", "seed"],
    mappings: [
      mapping({
        providerId: "alibaba",
        externalId: "qwen-image-3.0",
        pricing: { prompt: "0", completion: "0", per_image: { "1024x1024": "0.035", "1328x1328": "0.035", "1664x928": "0.035", "928x1664": "0.035" } },
        contextLength: 800,
        maxOutput: 4,
        streaming: false,
      }),
    ],
  },
];

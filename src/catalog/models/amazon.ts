import type { ModelDefinition } from "../types";
import { mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "nova", maker: "amazon", kind: "chat", outputModalities: ["text"], tokenizer: "nova" } as const;

export const AMAZON_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "nova-pro",
    name: "Amazon Nova Pro",
    description: "Amazon's capable multimodal model balancing accuracy, speed and cost.",
    aliases: ["amazon.nova-pro-v1:0"],
    created: released("2024-12-03"),
    inputModalities: ["text", "image", "video"],
    stability: "stable",
    mappings: [mapping({ providerId: "aws-bedrock", externalId: "us.amazon.nova-pro-v1:0", pricing: priced("0.80", "3.20", { cacheRead: "0.20" }), contextLength: 300_000, maxOutput: 10_000, vision: true, ...TOOLS, region: "us-east-1" })],
  },
  {
    ...base,
    id: "nova-lite",
    name: "Amazon Nova Lite",
    description: "Amazon's very low-cost multimodal model.",
    aliases: ["amazon.nova-lite-v1:0"],
    created: released("2024-12-03"),
    inputModalities: ["text", "image", "video"],
    stability: "stable",
    mappings: [mapping({ providerId: "aws-bedrock", externalId: "us.amazon.nova-lite-v1:0", pricing: priced("0.06", "0.24", { cacheRead: "0.015" }), contextLength: 300_000, maxOutput: 10_000, vision: true, ...TOOLS, region: "us-east-1" })],
  },
  {
    ...base,
    id: "nova-micro",
    name: "Amazon Nova Micro",
    description: "Amazon's text-only model with the lowest latency and cost.",
    aliases: ["amazon.nova-micro-v1:0"],
    created: released("2024-12-03"),
    inputModalities: ["text"],
    stability: "stable",
    mappings: [mapping({ providerId: "aws-bedrock", externalId: "us.amazon.nova-micro-v1:0", pricing: priced("0.035", "0.14", { cacheRead: "0.00875" }), contextLength: 128_000, maxOutput: 10_000, ...TOOLS, region: "us-east-1" })],
  },
];

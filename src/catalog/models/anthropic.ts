import type { ModelDefinition, ProviderMapping } from "../types";
import { JSON_ALL, mapping, priced, released, TOOLS } from "./helpers";

interface ClaudeSpec {
  anthropicId: string;
  bedrockId?: string;
  vertexId?: string;
  price: { in: string; out: string; read: string; write: string; write1h: string };
  contextLength: number;
  maxOutput: number;
  thinking: boolean;
  deprecatedAt?: string;
  deactivatedAt?: string;
}

/** Claude on Anthropic, Bedrock (US cross-region profile) and Vertex, same list price. */
function claude(s: ClaudeSpec): ProviderMapping[] {
  const shared = {
    contextLength: s.contextLength,
    maxOutput: s.maxOutput,
    vision: true,
    ...TOOLS,
    // response_format on all three platforms: natively on 4.5 and newer, else through a forced
    // tool call (src/providers/anthropic/structured-output.ts).
    ...JSON_ALL,
    reasoning: s.thinking,
    ...(s.thinking ? { reasoningModes: ["standard", "extended"] as const } : {}),
    minCacheableTokens: 1024,
    ...(s.deprecatedAt ? { deprecatedAt: s.deprecatedAt } : {}),
    ...(s.deactivatedAt ? { deactivatedAt: s.deactivatedAt } : {}),
  };
  const p = s.price;
  const out: ProviderMapping[] = [
    mapping({
      ...shared,
      providerId: "anthropic",
      externalId: s.anthropicId,
      pricing: priced(p.in, p.out, { cacheRead: p.read, cacheWrite: p.write, cacheWrite1h: p.write1h }),
      cancellation: true,
    }),
  ];
  if (s.bedrockId) {
    out.push(mapping({
      ...shared,
      providerId: "aws-bedrock",
      externalId: s.bedrockId,
      pricing: priced(p.in, p.out, { cacheRead: p.read, cacheWrite: p.write }),
      region: "us-east-1",
    }));
  }
  if (s.vertexId) {
    out.push(mapping({
      ...shared,
      providerId: "google-vertex",
      externalId: s.vertexId,
      pricing: priced(p.in, p.out, { cacheRead: p.read, cacheWrite: p.write, cacheWrite1h: p.write1h }),
    }));
  }
  return out;
}

const SONNET_PRICE = { in: "3", out: "15", read: "0.30", write: "3.75", write1h: "6" };

const base = {
  family: "claude",
  maker: "anthropic",
  kind: "chat",
  inputModalities: ["text", "image", "file"],
  outputModalities: ["text"],
  tokenizer: "claude",
} as const;

export const ANTHROPIC_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "claude-sonnet-4",
    name: "Claude Sonnet 4",
    description: "Anthropic's balanced model with extended thinking, strong at coding and agents.",
    aliases: ["claude-sonnet-4-20250514", "claude-sonnet-4-0"],
    created: released("2025-05-22"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-sonnet-4-20250514",
      bedrockId: "us.anthropic.claude-sonnet-4-20250514-v1:0",
      vertexId: "claude-sonnet-4@20250514",
      price: SONNET_PRICE,
      contextLength: 200_000,
      maxOutput: 64_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-sonnet-4.5",
    name: "Claude Sonnet 4.5",
    description: "Anthropic's best model for complex agents and coding, with extended thinking.",
    aliases: ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"],
    created: released("2025-09-29"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-sonnet-4-5-20250929",
      bedrockId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      vertexId: "claude-sonnet-4-5@20250929",
      price: SONNET_PRICE,
      contextLength: 200_000,
      maxOutput: 64_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-opus-4.5",
    name: "Claude Opus 4.5",
    description: "Anthropic's most intelligent model, at a third of earlier Opus prices.",
    aliases: ["claude-opus-4-5", "claude-opus-4-5-20251101"],
    created: released("2025-11-24"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-opus-4-5-20251101",
      bedrockId: "us.anthropic.claude-opus-4-5-20251101-v1:0",
      vertexId: "claude-opus-4-5@20251101",
      price: { in: "5", out: "25", read: "0.50", write: "6.25", write1h: "10" },
      contextLength: 200_000,
      maxOutput: 64_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-opus-4.6",
    name: "Claude Opus 4.6",
    description: "Anthropic's Opus 4.6 for coding, enterprise agents and professional work, with a 1M-token context.",
    aliases: ["claude-opus-4-6"],
    created: released("2026-02-05"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-opus-4-6",
      bedrockId: "us.anthropic.claude-opus-4-6-v1:0",
      vertexId: "claude-opus-4-6",
      price: { in: "5", out: "25", read: "0.50", write: "6.25", write1h: "10" },
      contextLength: 1_000_000,
      maxOutput: 128_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-sonnet-4.6",
    name: "Claude Sonnet 4.6",
    description: "Anthropic's Sonnet 4.6 with a 1M-token context window.",
    aliases: ["claude-sonnet-4-6"],
    created: released("2026-02-17"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-sonnet-4-6",
      bedrockId: "us.anthropic.claude-sonnet-4-6-v1:0",
      vertexId: "claude-sonnet-4-6",
      price: SONNET_PRICE,
      contextLength: 1_000_000,
      maxOutput: 64_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-sonnet-5",
    name: "Claude Sonnet 5",
    description: "Anthropic's next-generation Sonnet with adaptive thinking, a 1M-token context and 128K output.",
    created: released("2026-08-05"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-sonnet-5",
      bedrockId: "us.anthropic.claude-sonnet-5-v1:0",
      vertexId: "claude-sonnet-5",
      price: { in: "2", out: "10", read: "0.20", write: "2.50", write1h: "4" },
      contextLength: 1_000_000,
      maxOutput: 128_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-haiku-4.5",
    name: "Claude Haiku 4.5",
    description: "Anthropic's fastest model with near-frontier intelligence.",
    aliases: ["claude-haiku-4-5", "claude-haiku-4-5-20251001"],
    created: released("2025-10-15"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-haiku-4-5-20251001",
      bedrockId: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
      vertexId: "claude-haiku-4-5@20251001",
      price: { in: "1", out: "5", read: "0.10", write: "1.25", write1h: "2" },
      contextLength: 200_000,
      maxOutput: 64_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-opus-4.1",
    name: "Claude Opus 4.1",
    description: "Anthropic's Opus 4.1, for specialized complex reasoning tasks.",
    aliases: ["claude-opus-4-1", "claude-opus-4-1-20250805"],
    created: released("2025-08-05"),
    stability: "stable",
    mappings: claude({
      anthropicId: "claude-opus-4-1-20250805",
      bedrockId: "us.anthropic.claude-opus-4-1-20250805-v1:0",
      vertexId: "claude-opus-4-1@20250805",
      price: { in: "15", out: "75", read: "1.50", write: "18.75", write1h: "30" },
      contextLength: 200_000,
      maxOutput: 32_000,
      thinking: true,
    }),
  },
  {
    ...base,
    id: "claude-3.7-sonnet",
    name: "Claude 3.7 Sonnet",
    description: "First hybrid-reasoning Claude; superseded by Claude Sonnet 4.5.",
    aliases: ["claude-3-7-sonnet", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest"],
    created: released("2025-02-24"),
    stability: "stable",
    deprecatedAt: "2025-10-28T00:00:00Z",
    deactivatedAt: "2026-02-19T00:00:00Z",
    mappings: claude({
      anthropicId: "claude-3-7-sonnet-20250219",
      bedrockId: "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
      price: SONNET_PRICE,
      contextLength: 200_000,
      maxOutput: 64_000,
      thinking: true,
      deprecatedAt: "2025-10-28T00:00:00Z",
      deactivatedAt: "2026-02-19T00:00:00Z",
    }),
  },
  {
    ...base,
    id: "claude-3.5-sonnet",
    name: "Claude 3.5 Sonnet",
    description: "Claude 3.5 Sonnet (October 2024); retired by Anthropic.",
    aliases: ["claude-3-5-sonnet", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest"],
    created: released("2024-10-22"),
    stability: "stable",
    deprecatedAt: "2025-08-13T00:00:00Z",
    deactivatedAt: "2025-10-22T00:00:00Z",
    mappings: claude({
      anthropicId: "claude-3-5-sonnet-20241022",
      price: SONNET_PRICE,
      contextLength: 200_000,
      maxOutput: 8_192,
      thinking: false,
      deprecatedAt: "2025-08-13T00:00:00Z",
      deactivatedAt: "2025-10-22T00:00:00Z",
    }),
  },
];

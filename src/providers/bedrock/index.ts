import type { ProviderAdapter } from "../types";
import { openaiAdapter } from "../openai";

/** Placeholder until the bedrock adapter lands (same file). */
export const bedrockAdapter: ProviderAdapter = openaiAdapter;

import type { ProviderAdapter } from "../types";
import { openaiAdapter } from "../openai";

/** Placeholder until the anthropic adapter lands (same file). */
export const anthropicAdapter: ProviderAdapter = openaiAdapter;

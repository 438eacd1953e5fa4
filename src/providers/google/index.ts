import type { ProviderAdapter } from "../types";
import { openaiAdapter } from "../openai";

/** Placeholder until the google adapter lands (same file). */
export const googleAdapter: ProviderAdapter = openaiAdapter;

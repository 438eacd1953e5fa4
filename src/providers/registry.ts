/** Wire format -> adapter. The chat route only ever talks to adapters through this. */
import type { WireFormat } from "../catalog/types";
import type { ProviderAdapter } from "./types";
import { anthropicAdapter } from "./anthropic";
import { azureAdapter } from "./azure";
import { bedrockAdapter } from "./bedrock";
import { googleAdapter } from "./google";
import { openaiAdapter } from "./openai";

const ADAPTERS: Record<WireFormat, ProviderAdapter> = {
  openai: openaiAdapter,
  azure: azureAdapter,
  anthropic: anthropicAdapter,
  google: googleAdapter,
  bedrock: bedrockAdapter,
};

export function adapterFor(format: WireFormat): ProviderAdapter {
  return ADAPTERS[format];
}

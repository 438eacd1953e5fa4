/**
 * The hand-kept catalogue, one file per maker: canonical ids, aliases, external ids, the capability
 * flags the adapters need, and the prices of mappings no pinned source covers (read on
 * `PRICES_READ_AT`). Prices a source covers are replaced by the generated ones (./index.ts).
 */
import type { ModelDefinition } from "../types";
import { AMAZON_MODELS } from "./amazon";
import { ANTHROPIC_MODELS } from "./anthropic";
import { DEEPSEEK_MODELS } from "./deepseek";
import { GOOGLE_MODELS } from "./google";
import { META_MODELS } from "./meta";
import { MISTRAL_MODELS } from "./mistral";
import { MOONSHOT_MODELS } from "./moonshot";
import { OPENAI_MODELS } from "./openai";
import { PERPLEXITY_MODELS } from "./perplexity";
import { QWEN_MODELS } from "./qwen";
import { XAI_MODELS } from "./xai";
import { ZAI_MODELS } from "./zai";

/** The day the prices below were read from the providers' public price pages (UTC). */
export const PRICES_READ_AT = "2026-11-21";

export const CURATED_MODELS: readonly ModelDefinition[] = [
  ...OPENAI_MODELS,
  ...ANTHROPIC_MODELS,
  ...GOOGLE_MODELS,
  ...META_MODELS,
  ...MISTRAL_MODELS,
  ...DEEPSEEK_MODELS,
  ...XAI_MODELS,
  ...PERPLEXITY_MODELS,
  ...MOONSHOT_MODELS,
  ...QWEN_MODELS,
  ...ZAI_MODELS,
  ...AMAZON_MODELS,
];

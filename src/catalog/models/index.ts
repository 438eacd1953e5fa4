/** Every catalogue model, one file per maker. Add a maker file and list it here. */
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

export const MODELS: readonly ModelDefinition[] = [
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

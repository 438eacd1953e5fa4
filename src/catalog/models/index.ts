/** Every catalogue model, one file per maker. Add a maker file and list it here. */
import type { ModelDefinition } from "../types";
import { ANTHROPIC_MODELS } from "./anthropic";
import { GOOGLE_MODELS } from "./google";
import { META_MODELS } from "./meta";
import { OPENAI_MODELS } from "./openai";

/** The day the prices below were read from the providers' public price pages. */
export const PRICES_READ_AT = "2026-11-21";

export const MODELS: readonly ModelDefinition[] = [
  ...OPENAI_MODELS,
  ...ANTHROPIC_MODELS,
  ...GOOGLE_MODELS,
  ...META_MODELS,
];

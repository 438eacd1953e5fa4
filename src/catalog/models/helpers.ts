/**
 * Small builders that keep the model files readable. Prices are written as USD per million
 * tokens (as providers publish them) and converted to USD per token by moving the decimal point,
 * so no float ever touches a price.
 */
import type { ModelDefinition, Pricing, ProviderId, ProviderMapping } from "../types";

/** `"0.15"` ($ per 1M tokens) -> `"0.00000015"` ($ per token). Exact: string arithmetic only. */
export function perM(perMillion: string): string {
  return shiftDecimal(perMillion, 6);
}

/** `"0.04"` ($ per 1K units) -> `"0.00004"`. */
export function perK(perThousand: string): string {
  return shiftDecimal(perThousand, 3);
}

function shiftDecimal(value: string, places: number): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) throw new Error(`not a non-negative decimal: ${value}`);
  const intPart = m[1] ?? "0";
  const frac = m[2] ?? "";
  const digits = (intPart + frac).replace(/^0+(?=\d)/, "");
  const scale = frac.length + places;
  const padded = digits.padStart(scale + 1, "0");
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(padded.length - scale).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

type MappingInput = Pick<ProviderMapping, "providerId" | "externalId" | "pricing" | "contextLength" | "maxOutput"> &
  Partial<Omit<ProviderMapping, "providerId" | "externalId" | "pricing" | "contextLength" | "maxOutput">>;

/** A mapping with conservative capability defaults (streaming on, everything else off). */
export function mapping(input: MappingInput): ProviderMapping {
  return {
    streaming: true,
    vision: false,
    tools: false,
    parallelToolCalls: false,
    reasoning: false,
    jsonOutput: false,
    structuredOutputs: false,
    ...input,
  };
}

/** Capability bundles used by many mappings. */
export const TOOLS = { tools: true, parallelToolCalls: true } as const;
export const JSON_ALL = { jsonOutput: true, structuredOutputs: true } as const;
export const JSON_ONLY = { jsonOutput: true } as const;

/** `Date.UTC` in seconds, for `created`. */
export const released = (iso: string): number => Math.floor(Date.parse(`${iso}T00:00:00Z`) / 1000);

/** Token pricing from per-million list prices (cache fields optional). */
export function priced(
  inputPerM: string,
  outputPerM: string,
  extra: { cacheRead?: string; cacheWrite?: string; cacheWrite1h?: string; audio?: string; request?: string } = {},
): Pricing {
  const p: Pricing = { prompt: perM(inputPerM), completion: perM(outputPerM) };
  if (extra.cacheRead !== undefined) p.input_cache_read = perM(extra.cacheRead);
  if (extra.cacheWrite !== undefined) p.input_cache_write = perM(extra.cacheWrite);
  if (extra.cacheWrite1h !== undefined) p.input_cache_write_1h = perM(extra.cacheWrite1h);
  if (extra.audio !== undefined) p.input_audio = perM(extra.audio);
  if (extra.request !== undefined) p.request = extra.request;
  return p;
}

/**
 * Builds the mappings of an open-weights model served by several hosts with the same
 * capabilities: `hosts(caps, [provider, externalId, in$/M, out$/M, context, maxOutput], ...)`.
 */
export function hosts(
  caps: Partial<Omit<ProviderMapping, "providerId" | "externalId" | "pricing" | "contextLength" | "maxOutput">>,
  rows: ReadonlyArray<readonly [ProviderMapping["providerId"], string, string, string, number, number]>,
): ProviderMapping[] {
  return rows.map(([providerId, externalId, inM, outM, contextLength, maxOutput]) =>
    mapping({ ...caps, providerId, externalId, pricing: priced(inM, outM), contextLength, maxOutput }),
  );
}

/** A text embedding model on one provider (`POST /v1/embeddings`): input price only, no streaming. */
export function embeddingModel(
  e: Pick<ModelDefinition, "id" | "name" | "description" | "family" | "maker" | "tokenizer"> & {
    released: string;
    providerId: ProviderId;
    inputPerM: string;
    contextLength: number;
  },
): ModelDefinition {
  const { id, name, description, family, maker } = e;
  return {
    id,
    name,
    description,
    family,
    maker,
    kind: "embedding",
    created: released(e.released),
    inputModalities: ["text"],
    outputModalities: ["text"],
    tokenizer: e.tokenizer,
    stability: "stable",
    supportedParameters: ["input", "dimensions", "encoding_format"],
    mappings: [mapping({ providerId: e.providerId, externalId: e.id, pricing: priced(e.inputPerM, "0"), contextLength: e.contextLength, maxOutput: 0, streaming: false })],
  };
}

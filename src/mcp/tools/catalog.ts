/** list-models and list-image-models: the public catalogue, read-only. */
import type { McpServer } from "@modelcontextprotocol/server";
import { isDeactivated, isDeprecated, isFreeMapping, listModels, modelsByKind } from "../../catalog/index";
import type { ModelDefinition } from "../../catalog/types";
import { formatUsd, parseUsd } from "../../billing/money";
import { listImageModelsOutput, listModelsInput, listModelsOutput } from "../schemas";
import { jsonResult } from "./result";
import { IMAGE_DEFAULTS, TOOL_TEXT } from "./descriptions";

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const DEFAULT_IMAGE_MODEL = IMAGE_DEFAULTS.model;

const lowest = (values: string[]): string => {
  let best: bigint | null = null;
  for (const v of values) {
    const p = parseUsd(v);
    if (best === null || p < best) best = p;
  }
  return formatUsd(best ?? 0n);
};

/** Fields both model listings start with. */
const identity = (m: ModelDefinition) => ({ id: m.id, name: m.name, family: m.family, maker: m.maker, description: m.description });

function modelView(m: ModelDefinition) {
  const maps = m.mappings;
  const any = (f: (x: (typeof maps)[number]) => boolean) => maps.some(f);
  return {
    ...identity(m),
    context_length: Math.max(0, ...maps.map((x) => x.contextLength)),
    max_output: Math.max(0, ...maps.map((x) => x.maxOutput)),
    input_modalities: [...m.inputModalities],
    output_modalities: [...m.outputModalities],
    capabilities: {
      streaming: any((x) => x.streaming),
      vision: any((x) => x.vision),
      tools: any((x) => x.tools),
      reasoning: any((x) => x.reasoning),
      json_output: any((x) => x.jsonOutput),
      structured_outputs: any((x) => x.structuredOutputs),
    },
    pricing: { prompt: lowest(maps.map((x) => x.pricing.prompt)), completion: lowest(maps.map((x) => x.pricing.completion)) },
    providers: maps.map((x) => ({ providerId: x.providerId, pricing: { ...x.pricing } as Record<string, unknown> })),
    free: maps.length > 0 && maps.every((x) => isFreeMapping(m, x)),
    deprecated_at: m.deprecatedAt ?? null,
    deactivated_at: m.deactivatedAt ?? null,
  };
}

export function registerCatalogTools(server: McpServer): void {
  server.registerTool(
    "list-models",
    {
      ...TOOL_TEXT["list-models"],
      inputSchema: listModelsInput,
      outputSchema: listModelsOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      const now = Date.now();
      const family = args.family?.toLowerCase();
      const matching = listModels().filter(
        (m) =>
          m.kind === "chat" &&
          (args.include_deactivated || !isDeactivated(m, now)) &&
          !(args.exclude_deprecated && isDeprecated(m, now)) &&
          (family === undefined || m.family.toLowerCase() === family || m.family.toLowerCase().startsWith(`${family}-`)),
      );
      const models = matching.slice(0, args.limit ?? 20).map(modelView);
      return jsonResult({ models, returned: models.length, total: matching.length });
    },
  );

  server.registerTool(
    "list-image-models",
    {
      ...TOOL_TEXT["list-image-models"],
      outputSchema: listImageModelsOutput,
      annotations: READ_ONLY,
    },
    async () => {
      const now = Date.now();
      const models = modelsByKind("image")
        .filter((m) => !isDeactivated(m, now))
        .map((m) => {
          const perImage: Record<string, string> = {};
          for (const x of m.mappings) for (const [size, price] of Object.entries(x.pricing.per_image ?? {})) perImage[size] ??= price;
          const first = m.mappings[0]?.pricing;
          const pricing: Record<string, unknown> = Object.keys(perImage).length
            ? { per_image: perImage }
            : { prompt: first?.prompt ?? "0", completion: first?.completion ?? "0", ...(first?.image_output ? { image_output: first.image_output } : {}) };
          return {
            ...identity(m),
            aliases: [...(m.aliases ?? [])],
            providers: m.mappings.map((x) => x.providerId),
            sizes: Object.keys(perImage),
            pricing,
            deprecated_at: m.deprecatedAt ?? null,
          };
        });
      return jsonResult({ models, defaultModel: DEFAULT_IMAGE_MODEL });
    },
  );
}

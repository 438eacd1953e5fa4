/**
 * `GET /v1/models` (spec 2.5, 4.1). Without a key: the public catalogue, rendered once per isolate
 * per flag combination and served as a pre-serialized string. With a key: the same cached
 * selection, narrowed per mapping by compliance policy, project mode and IAM, plus the
 * organization's custom models (unless `include_restricted=true`).
 *
 * `GET /v1/models/{id}` (what `openai.models.retrieve()` calls): one entry of that same listing, by
 * canonical id or alias, `provider/model-id` (the mapped entry) or `<custom provider>/<model>`
 * (with a key of its organization). An id the caller could not see in the listing is a 404.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { checkKey, presentedKey, authenticateGatewayKey } from "../auth/gateway-key";
import { startRate } from "../rate-limits/admission";
import type { CustomModelRecord } from "../context/key-context";
import { isDecimalString, parseUsd } from "../billing/money";
import { validate } from "../errors/validation";
import { clientIpOf } from "./middleware/gateway-request";
import { keyedMappingFilter, publicSelection, visibleCustomModels, type CatalogQuery, type ModelSelection } from "../catalog/listing";
import { isDeactivated, parseModelRef } from "../catalog";
import { notFound } from "../errors/api-error";
import { serializeCustomModel, serializeMapping, serializeModel, type ModelJson } from "../catalog/serialize";

const flag = z.enum(["true", "false"], { error: "must be 'true' or 'false'" }).optional();

const querySchema = z.object({
  include_restricted: flag,
  include_deactivated: flag,
  exclude_deprecated: flag,
  no_training: flag,
  mapped: flag,
});

type RawQuery = z.infer<typeof querySchema>;

const toQuery = (q: RawQuery): CatalogQuery => ({
  includeRestricted: q.include_restricted === "true",
  includeDeactivated: q.include_deactivated === "true",
  excludeDeprecated: q.exclude_deprecated === "true",
  noTraining: q.no_training === "true",
  mapped: q.mapped === "true",
});

interface RenderedEntry extends ModelSelection {
  aggregated: ModelJson;
  perMapping: ModelJson[];
}

interface RenderedCatalogue {
  entries: RenderedEntry[];
  /** `{object:"list",data}` for anonymous callers, aggregated and mapped forms. */
  body: { aggregated: string; mapped: string };
  expiresAt: number;
}

/** Deprecation/deactivation dates move models in and out, so a rendering lives at most this long. */
const RENDER_TTL_MS = 10 * 60 * 1000;
const rendered = new Map<string, RenderedCatalogue>();

/** Exposed for tests: forget every cached rendering. */
export function resetCatalogueCache(): void {
  rendered.clear();
}

function renderedCatalogue(q: CatalogQuery, now: number): RenderedCatalogue {
  const cacheKey = `${Number(q.includeDeactivated)}${Number(q.excludeDeprecated)}${Number(q.noTraining)}`;
  const hit = rendered.get(cacheKey);
  if (hit && hit.expiresAt > now) return hit;
  const entries: RenderedEntry[] = publicSelection(q, now).map((s) => ({
    ...s,
    aggregated: serializeModel(s.model, s.mappings),
    perMapping: s.mappings.map((m) => serializeMapping(s.model, m)),
  }));
  const value: RenderedCatalogue = {
    entries,
    body: {
      aggregated: JSON.stringify({ object: "list", data: entries.map((e) => e.aggregated) }),
      mapped: JSON.stringify({ object: "list", data: entries.flatMap((e) => e.perMapping) }),
    },
    expiresAt: now + RENDER_TTL_MS,
  };
  rendered.set(cacheKey, value);
  return value;
}

const customIsFree = (cm: CustomModelRecord): boolean =>
  [cm.pricing.prompt ?? "0", cm.pricing.completion ?? "0", cm.pricing.request ?? "0"].every((p) => isDecimalString(p) && parseUsd(p) === 0n);

export const modelsRoutes = new Hono<AppEnv>();

modelsRoutes.get("/", validate("query", querySchema), async (c) => {
  const q = toQuery(c.req.valid("query"));
  const now = Date.now();
  const catalogue = renderedCatalogue(q, now);
  const json = (body: string, cache: string) =>
    c.body(body, 200, { "content-type": "application/json; charset=UTF-8", "cache-control": cache });

  const presented = c.req.header("authorization") !== undefined || c.req.header("x-api-key") !== undefined;
  if (!presented) return json(q.mapped ? catalogue.body.mapped : catalogue.body.aggregated, "public, max-age=60");

  // A key was sent: it must be valid (401 otherwise), even for include_restricted.
  const ctx = await checkKey(c.env, startRate(c, await authenticateGatewayKey(c.env, presentedKey(c.req.raw.headers), Date.now(), { sessions: true })));
  if (q.includeRestricted) return json(q.mapped ? catalogue.body.mapped : catalogue.body.aggregated, "private, max-age=60");

  const clientIp = clientIpOf(c.req.raw.headers);
  const allowed = keyedMappingFilter(c.env, ctx, clientIp);
  // A coding-plan key calls canonical ids only: its listing shows exactly those (no
  // `provider/model` entries even with mapped=true, no custom models).
  const canonicalOnly = ctx.key.kind === "coding-plan";
  const data: ModelJson[] = [];
  for (const e of catalogue.entries) {
    if (q.mapped && !canonicalOnly) {
      e.mappings.forEach((m, i) => {
        const entry = e.perMapping[i];
        if (entry && allowed(e.model, m)) data.push(entry);
      });
      continue;
    }
    const kept = e.mappings.filter((m) => allowed(e.model, m));
    if (kept.length === 0) continue;
    data.push(kept.length === e.mappings.length ? e.aggregated : serializeModel(e.model, kept));
  }
  if (!canonicalOnly) for (const cm of visibleCustomModels(ctx, clientIp, customIsFree)) data.push(serializeCustomModel(cm));
  return json(JSON.stringify({ object: "list", data }), "private, no-store");
});

const idParam = z.object({ id: z.string().min(1).max(512) });

modelsRoutes.get("/:id{.+}", validate("param", idParam), async (c) => {
  const id = c.req.valid("param").id;
  const unknown = () => notFound(`The model '${id}' does not exist. See GET /v1/models for available ids.`, "model_not_found");
  const presented = c.req.header("authorization") !== undefined || c.req.header("x-api-key") !== undefined;
  const ctx = presented ? await checkKey(c.env, startRate(c, await authenticateGatewayKey(c.env, presentedKey(c.req.raw.headers), Date.now(), { sessions: true }))) : null;
  const clientIp = clientIpOf(c.req.raw.headers);
  const now = Date.now();
  const ref = parseModelRef(id);
  let body: ModelJson | undefined;
  if (ref.kind === "unknown") {
    const cm = ctx && ref.prefix ? visibleCustomModels(ctx, clientIp, customIsFree).find((m) => m.providerName === ref.prefix && m.modelId === ref.rest) : undefined;
    if (cm) body = serializeCustomModel(cm);
  } else if (!isDeactivated(ref.model, now)) {
    const live = (ref.kind === "pinned" ? [ref.mapping] : ref.model.mappings).filter((m) => !m.deactivatedAt || Date.parse(m.deactivatedAt) > now);
    const allowed = ctx ? keyedMappingFilter(c.env, ctx, clientIp) : () => true;
    const kept = live.filter((m) => allowed(ref.model, m));
    if (kept.length > 0) body = ref.kind === "pinned" ? serializeMapping(ref.model, kept[0]!) : serializeModel(ref.model, kept);
  }
  if (!body) throw unknown();
  return c.body(JSON.stringify(body), 200, { "content-type": "application/json; charset=UTF-8", "cache-control": ctx ? "private, no-store" : "public, max-age=60" });
});

/**
 * Resolves the `model` of a chat request (spec 1.2) against the catalogue and the organization's
 * custom models. Pure: the inputs are the catalogue (through src/catalog) and the KeyContext data.
 *
 * - canonical id or alias               -> every mapping of that model
 * - `provider/model-id`                 -> that provider only (provider must be known and serve it)
 * - `<custom provider>/<model>`         -> the org's custom model (custom providers win over
 *                                          catalogue ids only when the prefix is not a provider id)
 * - coding-plan keys                    -> canonical ids only
 */
import { badRequest } from "../errors/api-error";
import { findModel, isProviderId, mappingFor } from "../catalog";
import type { ModelDefinition, ProviderId, ProviderMapping } from "../catalog/types";
import type { CustomModelRecord, CustomProviderRecord } from "../context/key-context";
import type { KeyKind } from "../db/schema";

export type ResolvedModel =
  | { kind: "catalog"; model: ModelDefinition; pinned: null }
  | { kind: "catalog"; model: ModelDefinition; pinned: { providerId: ProviderId; mapping: ProviderMapping } }
  | { kind: "custom"; provider: CustomProviderRecord; model: CustomModelRecord };

export interface ModelIdContext {
  keyKind: KeyKind;
  customProviders: readonly CustomProviderRecord[];
  customModels: readonly CustomModelRecord[];
}

const PARAM = "model";

export function parseModelId(raw: string, ctx: ModelIdContext): ResolvedModel {
  const id = raw.trim();
  if (!id) throw badRequest("'model' must not be empty.", PARAM, "model_not_found");
  const direct = findModel(id);
  if (direct) return { kind: "catalog", model: direct, pinned: null };

  const slash = id.indexOf("/");
  const codingPlan = ctx.keyKind === "coding-plan";
  if (slash <= 0 || slash === id.length - 1) {
    throw badRequest(`The model '${id}' does not exist. See GET /v1/models for available ids.`, PARAM, "model_not_found");
  }
  const prefix = id.slice(0, slash);
  const rest = id.slice(slash + 1);

  if (isProviderId(prefix)) {
    if (codingPlan) throw codingPlanError(id);
    const model = findModel(rest);
    if (!model) {
      throw badRequest(`The model '${rest}' does not exist (requested as '${id}').`, PARAM, "model_not_found");
    }
    const mapping = mappingFor(model, prefix);
    if (!mapping) {
      throw badRequest(`The provider '${prefix}' does not serve the model '${model.id}'.`, PARAM, "model_not_found");
    }
    return { kind: "catalog", model, pinned: { providerId: prefix, mapping } };
  }

  const provider = ctx.customProviders.find((p) => p.name === prefix);
  if (provider) {
    if (codingPlan) throw codingPlanError(id);
    const model = ctx.customModels.find((m) => m.providerName === prefix && m.modelId === rest);
    if (!model) {
      throw badRequest(`The custom provider '${prefix}' has no model '${rest}'. Register it with POST /v1/master/custom-models.`, PARAM, "model_not_found");
    }
    return { kind: "custom", provider, model };
  }
  throw badRequest(`Unknown provider '${prefix}' in model '${id}'.`, PARAM, "model_not_found");
}

function codingPlanError(id: string) {
  return badRequest(
    `Coding-plan keys accept only canonical model ids (without a provider prefix); '${id}' is provider-pinned or custom.`,
    PARAM,
    "model_not_allowed",
  );
}

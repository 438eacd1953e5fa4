/**
 * Fallback models (`models`, contract section 8): the request's `model` first, then each of
 * `models` in order, each with the candidates its own selection allows (capabilities, compliance,
 * credentials, IAM, preferences: a fallback model never reaches what the caller's rules deny).
 * Their candidates carry `modelRank` i + 1, and the plan tries model after model
 * (src/routing/order.ts). A fallback model that cannot serve at all is left out; when no model
 * can, the answer is the request's own model's refusal.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { ApiError, badRequest } from "../errors/api-error";
import type { ChatRequest } from "../providers/types";
import { parseModelId, type ResolvedModel } from "./parse-model-id";
import { selectCandidates, type Selection } from "./candidates";
import type { Continent } from "./regions";

/** What a resolved model names, so the same model is not planned twice. */
const identity = (r: ResolvedModel): string =>
  r.kind === "custom" ? `custom:${r.provider.name}/${r.model.modelId}` : `${r.pinned?.providerId ?? "*"}/${r.model.id}`;

/** Resolves `models` for a key (400 naming `models.<i>` for an unknown id), without duplicates of `model`. */
export function resolveFallbacks(auth: KeyContext, req: ChatRequest, primary: ResolvedModel): ResolvedModel[] {
  const seen = new Set([identity(primary)]);
  const out: ResolvedModel[] = [];
  (req.models ?? []).forEach((id, i) => {
    let r: ResolvedModel;
    try {
      r = parseModelId(id, { keyKind: auth.key.kind, customProviders: auth.customProviders, customModels: auth.customModels });
    } catch (err) {
      if (err instanceof ApiError) throw badRequest(`Invalid value for 'models.${i}': ${err.message}`, `models.${i}`, err.code ?? "model_not_found");
      throw err;
    }
    const key = identity(r);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(r);
  });
  return out;
}

/** The candidates of `model` and of every fallback model (in that order of `modelRank`). */
export function selectWithFallbacks(
  env: Env,
  auth: KeyContext,
  resolved: ResolvedModel,
  fallbacks: readonly ResolvedModel[],
  req: ChatRequest,
  clientIp: string | null,
  callerContinent: Continent | null = null,
): Selection {
  const primary = selectCandidates(env, auth, resolved, req, clientIp);
  primary.needs.callerContinent = callerContinent;
  if (!fallbacks.length) return primary;
  const candidates = primary.ok ? [...primary.candidates] : [];
  const now = Date.now();
  fallbacks.forEach((r, i) => {
    const s = selectCandidates(env, auth, r, req, clientIp, now, i + 1);
    if (s.ok) candidates.push(...s.candidates);
  });
  return candidates.length ? { ok: true, candidates, needs: primary.needs } : primary;
}

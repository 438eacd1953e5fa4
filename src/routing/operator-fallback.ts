/**
 * Hybrid projects may fall back from their own provider keys to the operator's (project setting
 * `operatorKeyFallback`, default off): when every key of the organization for a provider's endpoint
 * failed in a request (401/403/429/5xx, key-choice.ts), the same provider, model and endpoint is
 * tried once more with the operator's key, billed to the organization's credits, before another
 * provider. Same provider, model and region: the compliance, preference and IAM decisions that let
 * the organization's key through hold for it unchanged. Off, or in another mode, nothing changes:
 * an `api-keys` project never spends credits, and a `credits` project has no keys of its own.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import type { Candidate } from "./candidates";
import { planCredential } from "./credentials";
import { isKeyFailure } from "./key-choice";

/**
 * The candidate on the operator's key after `cand`, on the organization's own key, failed with
 * `status`, or null (setting off, not a key failure, or no operator key for that endpoint).
 */
export function withOperatorKey(env: Env, project: KeyContext["project"], cand: Candidate, status: number): Candidate | null {
  if (project.mode !== "hybrid" || project.operatorKeyFallback !== true) return null;
  const plan = cand.credential;
  if (plan.source !== "byok" || !("providerKey" in plan) || !isKeyFailure(status)) return null;
  const region = plan.region ?? "";
  const operator = planCredential(env, "credits", cand.providerId, [], { region, isDefault: !plan.region });
  return operator ? { ...cand, credential: operator } : null;
}

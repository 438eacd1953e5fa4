/**
 * Regional endpoints for the doors that call one provider mapping at a time (embeddings, images,
 * moderations, video jobs), the same way chat gets them (candidates.ts): each mapping the door kept, in the
 * door's order, becomes one candidate per endpoint (endpoints.ts: the default one, every
 * `<ID>_BASE_URL__<REGION>`, the regions of the organization's keys), with the credential its
 * project mode allows there (credentials.ts), judged by IAM and residency (`allow_regions`,
 * `deny_regions`, the organization's `compliance.regions`) on that endpoint's own region. The
 * endpoints of one mapping are ordered for the caller's continent as chat ranks them
 * (candidate-stats.ts: the continent's evidence, else the region table), so a European caller
 * starts on a European endpoint and fails over to the next nearest. Without a continent the
 * default endpoint stays first.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import type { ModelDefinition, ProviderInfo, ProviderMapping } from "../catalog/types";
import { getProvider, isFreeMapping } from "../catalog";
import { evaluateAccess, type AccessRequest } from "../iam/evaluate";
import type { Candidate } from "./candidates";
import { rankingView } from "./candidate-stats";
import { planCredential, type CredentialPlan } from "./credentials";
import { endpointsOf } from "./endpoints";
import type { Continent } from "./regions";
import { rank } from "./score";

export interface DoorEndpoint {
  provider: ProviderInfo;
  mapping: ProviderMapping;
  /** `""` for a global endpoint (`metadata.used_region`). */
  region: string;
  credential: CredentialPlan;
}

export interface DoorEndpoints {
  endpoints: DoorEndpoint[];
  /** The first IAM or residency denial met, for the 403 when no endpoint is left. */
  denial: string | null;
}

export function doorEndpoints(
  env: Env,
  auth: KeyContext,
  o: { model: ModelDefinition; mappings: readonly ProviderMapping[]; kind: AccessRequest["kind"]; clientIp: string | null; caller: Continent | null | undefined },
): DoorEndpoints {
  const byok = auth.project.mode !== "credits" ? auth.providerKeys : [];
  const out: DoorEndpoint[] = [];
  let denial: string | null = null;
  for (const mapping of o.mappings) {
    const provider = getProvider(mapping.providerId);
    if (!provider) continue;
    const free = isFreeMapping(o.model, mapping);
    const kept: Candidate[] = [];
    for (const endpoint of endpointsOf(env, mapping.providerId, mapping.region ?? provider.region, byok)) {
      const credential = planCredential(env, auth.project.mode, mapping.providerId, auth.providerKeys, endpoint);
      if (!credential) continue;
      const decision = evaluateAccess(auth, { model: o.model.id, provider: mapping.providerId, free, clientIp: o.clientIp, kind: o.kind, region: endpoint.region });
      if (!decision.allowed) {
        denial ??= decision.message;
        continue;
      }
      kept.push({ providerId: mapping.providerId, modelId: o.model.id, provider, mapping, model: o.model, credential, free, pinned: false, region: endpoint.region, modelRank: 0 });
    }
    // One mapping's endpoints differ only in where they are: same price, so the score compares
    // health and time to first token as the caller's continent sees them (ties keep the default first).
    const view = rankingView(kept, o.caller);
    const ranked = kept.length > 1 ? rank(kept, (c) => ({ cost: 0n, stats: view.stats(c), cacheable: false }), { explorationRate: 0 }) : kept;
    for (const c of ranked) out.push({ provider, mapping, region: c.region, credential: c.credential });
  }
  return { endpoints: out, denial };
}

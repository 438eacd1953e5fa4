/**
 * `POST /v1/messages/count_tokens`: exact where a provider counts for us, the estimate otherwise.
 *
 * The request's model is routed like a Messages request (capabilities, compliance, credentials,
 * IAM: the prompt only goes where the key's requests could go); the first candidate whose adapter
 * has a counter (Claude on Anthropic's API, with an operator key or the organization's own) counts
 * it. No such candidate, or a counter that fails: the estimate admission uses
 * (src/billing/estimate.ts). Either way nothing is billed; `x-gateway-token-count` says which.
 */
import type { GatewayRequest } from "../../routes/middleware/gateway-request";
import type { ChatRequest, UpstreamTarget } from "../../providers/types";
import { adapterFor } from "../../providers/registry";
import { estimatePromptTokens } from "../../billing/estimate";
import { parseModelId } from "../../routing/parse-model-id";
import { selectCandidates } from "../../routing/candidates";
import { resolveCredential } from "../../routing/credentials";

export const TOKEN_COUNT_HEADER = "x-gateway-token-count";
export type TokenCountSource = "exact" | "estimate";

/** A provider's counter gets this long; past it the estimate answers. */
const COUNT_TIMEOUT_MS = 10_000;

async function exactCount(g: GatewayRequest, req: ChatRequest): Promise<number | null> {
  let resolved;
  try {
    resolved = parseModelId(req.model, { keyKind: g.auth.key.kind, customProviders: g.auth.customProviders, customModels: g.auth.customModels });
  } catch {
    return null; // an unknown model: only the estimate can say anything
  }
  const selection = selectCandidates(g.env, g.auth, resolved, req, g.clientIp);
  if (!selection.ok) return null;
  for (const cand of selection.candidates) {
    const adapter = adapterFor(cand.provider.wireFormat);
    if (!adapter.countTokens) continue;
    try {
      const cred = await resolveCredential(g.env, cand.credential, cand.provider.baseUrl);
      const target: UpstreamTarget = { provider: cand.provider, mapping: cand.mapping, model: cand.model, baseUrl: cred.baseUrl, apiKey: cred.apiKey, settings: cred.settings, credentialOwner: cred.owner };
      const signal = g.signal ? AbortSignal.any([g.signal, AbortSignal.timeout(COUNT_TIMEOUT_MS)]) : AbortSignal.timeout(COUNT_TIMEOUT_MS);
      return await adapter.countTokens(req, target, signal);
    } catch {
      // This counter failed; another candidate's may answer, else the estimate.
    }
  }
  return null;
}

export async function countInputTokens(g: GatewayRequest, req: ChatRequest): Promise<{ inputTokens: number; source: TokenCountSource }> {
  const exact = await exactCount(g, req);
  return exact === null ? { inputTokens: estimatePromptTokens(req), source: "estimate" } : { inputTokens: exact, source: "exact" };
}

/**
 * `POST /v1/moderations` (OpenAI shape): `{input: string | string[] | parts[], model?}` ->
 * `{id, model, results: [{flagged, categories, category_scores}]}`.
 *
 * Routed to the moderation model's mappings on providers with `moderation: true` (catalogue data),
 * in mapping order with failover on 5xx/network errors. Only provider and IP rules apply (spec
 * 5.4): `evaluateAccess` with kind `moderation`. Admitted like every spending route
 * (docs/admission.md): the key's spend limits and, for credit-paid providers, the organization's
 * credits, with reservations released in the settlement of every outcome.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { admitKey, checkKey, requireGatewayKey } from "../auth/gateway-key";
import { admitCreditCandidates } from "../billing/credits";
import { describeZodError } from "../errors/validation";
import { ApiError, badRequest, permissionDenied } from "../errors/api-error";
import { upstreamRejection } from "../routing/failover";
import { evaluateAccess, type AccessDecision } from "../iam/evaluate";
import { clientIpOf } from "./middleware/gateway-request";
import { getProvider, isFreeMapping, parseModelRef } from "../catalog";
import type { ModelDefinition, ProviderMapping } from "../catalog/types";
import { credentialHash, planCredential, resolveCredential, type CredentialPlan } from "../routing/credentials";
import { maxPico, parseUsd, type Pico } from "../billing/money";
import { renewLeasesEarly, settleRequest } from "../billing/settle";
import { writeRequestLog } from "../usage/request-log";
import { detectSourceApp } from "../usage/source-app";
import type { RoutingAttempt } from "../db/schema";
import { newId } from "../lib/ids";

export const DEFAULT_MODERATION_MODEL = "omni-moderation-latest";
const UPSTREAM_TIMEOUT_MS = 30_000;

const part = z.union([
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("image_url"), image_url: z.object({ url: z.string().min(1) }) }),
]);

const body = z.object({
  input: z.union([z.string(), z.array(z.string()).min(1).max(256), z.array(part).min(1).max(64)]),
  model: z.string().trim().min(1).max(200).optional(),
});

interface Candidate {
  model: ModelDefinition;
  mapping: ProviderMapping;
  plan: CredentialPlan;
}

interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  [k: string]: unknown;
}

/** The moderation mappings a key may use for `modelRef`, or a precise error. */
function selectCandidates(env: Env, ctx: KeyContext, modelRef: string, clientIp: string | null): Candidate[] {
  const ref = parseModelRef(modelRef);
  if (ref.kind === "unknown") throw badRequest(`The model '${modelRef}' does not exist`, "model", "model_not_found");
  if (ref.model.kind !== "moderation") throw badRequest(`The model '${modelRef}' is not a moderation model`, "model", "invalid_model");
  const mappings = ref.kind === "pinned" ? [ref.mapping] : ref.model.mappings;
  const out: Candidate[] = [];
  let denial: AccessDecision | null = null;
  for (const m of mappings) {
    if (!getProvider(m.providerId)?.moderation) continue;
    const decision = evaluateAccess(ctx, { model: ref.model.id, provider: m.providerId, free: isFreeMapping(ref.model, m), clientIp, kind: "moderation" });
    if (!decision.allowed) {
      denial ??= decision;
      continue;
    }
    const plan = planCredential(env, ctx.project.mode, m.providerId, ctx.providerKeys);
    if (plan) out.push({ model: ref.model, mapping: m, plan });
  }
  if (out.length === 0) {
    if (denial && !denial.allowed) throw permissionDenied(denial.message);
    throw new ApiError(503, `No provider is available for '${modelRef}' in this project`, { type: "upstream_error", code: "no_provider_available" });
  }
  return out;
}

/** Normalizes one upstream result: `flagged` is derived from the categories when missing. */
function normalizeResult(raw: unknown): ModerationResult {
  const r = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  if (r.categories && typeof r.categories === "object") {
    for (const [k, v] of Object.entries(r.categories as Record<string, unknown>)) categories[k] = v === true;
  }
  if (r.category_scores && typeof r.category_scores === "object") {
    for (const [k, v] of Object.entries(r.category_scores as Record<string, unknown>)) if (typeof v === "number") scores[k] = v;
  }
  const flagged = typeof r.flagged === "boolean" ? r.flagged : Object.values(categories).some(Boolean);
  const out: ModerationResult = { flagged, categories, category_scores: scores };
  if (r.category_applied_input_types && typeof r.category_applied_input_types === "object") out.category_applied_input_types = r.category_applied_input_types;
  return out;
}

const promptTokensOf = (json: Record<string, unknown>): number => {
  const usage = json.usage as Record<string, unknown> | undefined;
  const n = usage?.prompt_tokens ?? usage?.total_tokens;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
};

export const moderationRoutes = new Hono<AppEnv>();

/** Tokens a moderation input can bill at most: bytes of its text, a fixed maximum per image. */
function inputTokensUpperBound(input: z.infer<typeof body>["input"]): number {
  const parts = typeof input === "string" ? [input] : input;
  let tokens = 0;
  for (const p of parts) {
    if (typeof p === "string") tokens += new TextEncoder().encode(p).length + 8;
    else tokens += p.type === "text" ? new TextEncoder().encode(p.text).length + 8 : 2_500;
  }
  return tokens;
}

/** Body and model checks; a request they refuse asks the key's state first (401 before 400). */
async function parseOrGate(c: Context<AppEnv>, ctx: KeyContext, clientIp: string | null) {
  try {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      throw badRequest("The request body is not valid JSON.", null, "invalid_json");
    }
    const parsed = body.safeParse(raw);
    if (!parsed.success) {
      const { message, param } = describeZodError(parsed.error);
      throw badRequest(message, param);
    }
    const modelRef = parsed.data.model ?? DEFAULT_MODERATION_MODEL;
    return { req: parsed.data, modelRef, candidates: selectCandidates(c.env, ctx, modelRef, clientIp) };
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) await checkKey(c.env, ctx, { spending: true });
    throw err;
  }
}

moderationRoutes.post("/", requireGatewayKey({ spend: true }), async (c) => {
  const started = Date.now();
  const clientIp = clientIpOf(c.req.raw.headers);
  const { req, modelRef, candidates: selected } = await parseOrGate(c, c.get("keyAuth"), clientIp);
  const tokens = BigInt(inputTokensUpperBound(req.input));
  const bound = (list: Candidate[]) => list.reduce<Pico>((m, cand) => maxPico(m, parseUsd(cand.mapping.pricing.prompt) * tokens), 0n);
  const admission = await admitKey(c.env, c.get("keyAuth"), bound(selected));
  const ctx = admission.context;
  renewLeasesEarly(c.env, ctx, (p) => c.executionCtx.waitUntil(p));
  let credit: Awaited<ReturnType<typeof admitCreditCandidates<Candidate>>>;
  try {
    credit = await admitCreditCandidates(c.env, ctx.organization.id, selected, (cand) => cand.plan.source === "credits" && bound([cand]) > 0n, (cand) => bound([cand]));
  } catch (err) {
    c.executionCtx.waitUntil(settleRequest(c.env, ctx, admission.reservationId, { totalPico: 0n, creditsPico: 0n }).catch(logSettleError));
    throw err;
  }
  const { candidates, reservationId: creditsReservationId } = credit;
  let settled = false;
  const settle = (cost: Pico, credits: boolean) => {
    settled = true;
    c.executionCtx.waitUntil(
      settleRequest(c.env, ctx, admission.reservationId, { totalPico: cost, creditsPico: credits ? cost : 0n }, creditsReservationId).catch(logSettleError),
    );
  };
  try {
    return await moderate(c, { ctx, req, modelRef, candidates, started, settle });
  } finally {
    if (!settled) settle(0n, false);
  }
});

const logSettleError = (err: unknown) => console.error("moderation settlement failed", err instanceof Error ? err.message : String(err));

interface ModerationRun {
  ctx: KeyContext;
  req: z.infer<typeof body>;
  modelRef: string;
  candidates: Candidate[];
  started: number;
  settle: (cost: Pico, credits: boolean) => void;
}

async function moderate(c: Context<AppEnv>, run: ModerationRun): Promise<Response> {
  const { ctx, req, modelRef, candidates, started } = run;
  const routing: RoutingAttempt[] = [];
  const logId = newId("log");
  const log = (statusCode: number, extra: { usedProvider?: string; error?: string; costPico?: Pico; credits?: boolean; usedModel?: string }) =>
    c.executionCtx.waitUntil(
      writeRequestLog(c.env, {
        logId,
        requestId: c.get("requestId"),
        auth: ctx,
        kind: "moderation",
        sourceApp: detectSourceApp(c.req.raw.headers),
        requestedModel: modelRef,
        requestedProvider: modelRef.includes("/") ? modelRef.split("/")[0] : null,
        usedModel: extra.usedModel ?? null,
        usedProvider: extra.usedProvider ?? null,
        statusCode,
        errorType: extra.error ? "upstream_error" : null,
        errorMessage: extra.error ?? null,
        costPico: extra.costPico ?? 0n,
        creditsCostPico: extra.credits ? (extra.costPico ?? 0n) : 0n,
        byokCostPico: extra.credits ? 0n : (extra.costPico ?? 0n),
        latencyMs: Date.now() - started,
        routing,
        createdAt: started,
      }),
    );

  let lastError: ApiError | null = null;
  for (const cand of candidates) {
    const provider = getProvider(cand.mapping.providerId);
    if (!provider) continue;
    const attemptStart = Date.now();
    const attempt: RoutingAttempt = { provider: provider.id, model: cand.mapping.externalId, status_code: 0, succeeded: false, credentialSource: cand.plan.source, logId };
    if ("providerKey" in cand.plan) {
      attempt.providerKeyId = cand.plan.providerKey.id;
      if (cand.plan.providerKey.label) attempt.providerKeyLabel = cand.plan.providerKey.label;
    }
    routing.push(attempt);
    let res: Response;
    try {
      const cred = await resolveCredential(c.env, cand.plan, provider.baseUrl);
      attempt.apiKeyHash = await credentialHash(c.env, cred.apiKey);
      res = await fetch(`${cred.baseUrl}/moderations`, {
        method: "POST",
        headers: { authorization: `Bearer ${cred.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: cand.mapping.externalId, input: req.input }),
        redirect: "manual", // never followed (SSRF guard): a 3xx is an upstream error
        signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
      });
    } catch {
      attempt.status_code = 502;
      attempt.error_type = "network_error";
      attempt.latency_ms = Date.now() - attemptStart;
      lastError = new ApiError(502, `Provider ${provider.id} could not be reached`, { type: "upstream_error", code: "upstream_unreachable" });
      continue;
    }
    attempt.status_code = res.status;
    attempt.latency_ms = Date.now() - attemptStart;
    const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!res.ok || !json || !Array.isArray(json.results)) {
      attempt.error_type = res.status >= 500 || res.ok ? "upstream_error" : "client_error";
      const upstreamMsg = (json?.error as { message?: unknown } | undefined)?.message;
      const message = `Provider ${provider.id} answered ${res.status}${typeof upstreamMsg === "string" ? `: ${upstreamMsg.slice(0, 300)}` : ""}`;
      if (res.ok || res.status >= 500 || res.status === 429) {
        lastError = new ApiError(502, message, { type: "upstream_error", code: "upstream_error" });
        continue;
      }
      log(res.status, { usedProvider: provider.id, error: message, usedModel: cand.model.id });
      if (res.status === 401 || res.status === 403) throw new ApiError(502, message, { type: "upstream_error", code: "upstream_rejected" });
      throw upstreamRejection(res.status, message);
    }
    attempt.succeeded = true;
    const tokens = promptTokensOf(json);
    const cost = tokens > 0 ? parseUsd(cand.mapping.pricing.prompt) * BigInt(tokens) : 0n;
    const credits = cand.plan.source === "credits";
    run.settle(cost, credits);
    log(200, { usedProvider: provider.id, costPico: cost, credits, usedModel: cand.model.id });
    return c.json({
      id: typeof json.id === "string" ? json.id : `modr-${logId}`,
      model: cand.model.id,
      results: (json.results as unknown[]).map(normalizeResult),
    });
  }
  const err = lastError ?? new ApiError(502, "No provider answered", { type: "upstream_error", code: "upstream_error" });
  // Attributed to the last attempt's provider and the canonical model (analytics), as chat's.
  const last = routing[routing.length - 1];
  const model = candidates[0]?.model.id;
  log(err.status, { error: err.message, ...(last ? { usedProvider: last.provider } : {}), ...(model ? { usedModel: model } : {}) });
  throw err;
}

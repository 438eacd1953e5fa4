/**
 * `POST /v1/moderations` (OpenAI shape): `{input: string | string[] | parts[], model?}` ->
 * `{id, model, results: [{flagged, categories, category_scores}]}`.
 *
 * Routed to the moderation model's mappings on providers with `moderation: true` (catalogue data),
 * in mapping order with failover on 5xx/network errors. Only provider and IP rules apply (spec
 * 5.4): `evaluateAccess` with kind `moderation`. Admitted like every spending route
 * (docs/admission.md): the key's spend limits and, for credit-paid providers, the organization's
 * credits, asked at the same time while the first provider's call already runs (an early call,
 * src/billing/early-call.ts: nothing released before admission answered, cancelled if it
 * refuses), with reservations released in the settlement of every outcome.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { isProduction, type Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { checkKey, requireGatewayKey } from "../auth/gateway-key";
import { admitCreditCandidates } from "../billing/credits";
import { admitWithEarlyCall, type EarlyAdmitted } from "../billing/early-call";
import { describeZodError } from "../errors/validation";
import { ApiError, badRequest, permissionDenied } from "../errors/api-error";
import { upstreamRejection } from "../routing/failover";
import { clientIpOf } from "./middleware/gateway-request";
import { getProvider, parseModelRef } from "../catalog";
import type { ModelDefinition } from "../catalog/types";
import { credentialHash, resolveCredential } from "../routing/credentials";
import { maxPico, parseUsd, type Pico } from "../billing/money";
import { renewLeasesEarly, settleRequest } from "../billing/settle";
import { writeRequestLog } from "../usage/log-queue";
import { queueBodies } from "../usage/body-batch";
import { compactBody, errorBody } from "../usage/body-shapes";
import { detectSourceApp } from "../usage/source-app";
import type { RoutingAttempt } from "../db/schema";
import { newId } from "../lib/ids";
import { callerContinent, type Continent } from "../routing/regions";
import { doorEndpoints, type DoorEndpoint } from "../routing/door-endpoints";
import { DoorSamples, outcomeOfStatus } from "../routing/door-samples";

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

/** One endpoint of a moderation mapping (src/routing/door-endpoints.ts). */
interface Candidate extends DoorEndpoint {
  model: ModelDefinition;
}

interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  [k: string]: unknown;
}

/** The moderation endpoints a key may use for `modelRef`, nearest first for its caller, or a precise error. */
function selectCandidates(env: Env, ctx: KeyContext, modelRef: string, clientIp: string | null, caller: Continent | null): Candidate[] {
  const ref = parseModelRef(modelRef);
  if (ref.kind === "unknown") throw badRequest(`The model '${modelRef}' does not exist`, "model", "model_not_found");
  if (ref.model.kind !== "moderation") throw badRequest(`The model '${modelRef}' is not a moderation model`, "model", "invalid_model");
  const model = ref.model;
  const mappings = (ref.kind === "pinned" ? [ref.mapping] : model.mappings).filter((m) => getProvider(m.providerId)?.moderation);
  const { endpoints, denial } = doorEndpoints(env, ctx, { model, mappings, kind: "moderation", clientIp, caller });
  if (endpoints.length === 0) {
    if (denial) throw permissionDenied(denial);
    throw new ApiError(503, `No provider is available for '${modelRef}' in this project`, { type: "upstream_error", code: "no_provider_available" });
  }
  return endpoints.map((e) => ({ ...e, model }));
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
async function parseOrGate(c: Context<AppEnv>, ctx: KeyContext, clientIp: string | null, caller: Continent | null) {
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
    return { req: parsed.data, modelRef, candidates: selectCandidates(c.env, ctx, modelRef, clientIp, caller) };
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) await checkKey(c.env, ctx, { spending: true });
    throw err;
  }
}

/** One provider's answer (status and JSON body, null when not JSON), or unreachable (`status` 0). */
interface ModerationAttempt {
  status: number;
  json: Record<string, unknown> | null;
  ms: number;
  apiKeyHash?: string;
}

/** Calls one provider's `/moderations`; `cancel` aborts it (an early call that admission refused). */
async function callModeration(env: Env, cand: Candidate, baseUrl: string, input: z.infer<typeof body>["input"], cancel?: AbortSignal): Promise<ModerationAttempt> {
  const started = Date.now();
  let apiKeyHash: string | undefined;
  try {
    const cred = await resolveCredential(env, cand.credential, baseUrl);
    apiKeyHash = await credentialHash(env, cred.apiKey);
    const timeout = AbortSignal.timeout(UPSTREAM_TIMEOUT_MS);
    const res = await fetch(`${cred.baseUrl}/moderations`, {
      method: "POST",
      headers: { authorization: `Bearer ${cred.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: cand.mapping.externalId, input }),
      redirect: "manual", // never followed (SSRF guard): a 3xx is an upstream error
      signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout,
    });
    const ms = Date.now() - started;
    const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    return { status: res.status, json, ms, apiKeyHash };
  } catch {
    return { status: 0, json: null, ms: Date.now() - started, ...(apiKeyHash ? { apiKeyHash } : {}) };
  }
}

type LogExtra = { usedProvider?: string; usedRegion?: string; error?: string; errorType?: string; costPico?: Pico; credits?: boolean; usedModel?: string; answer?: unknown };

moderationRoutes.post("/", requireGatewayKey({ spend: true }), async (c) => {
  const started = Date.now();
  const clientIp = clientIpOf(c.req.raw.headers);
  const auth = c.get("keyAuth");
  const caller = callerContinent(c.req.raw, isProduction(c.env));
  const { req, modelRef, candidates: selected } = await parseOrGate(c, auth, clientIp, caller);
  const tokens = BigInt(inputTokensUpperBound(req.input));
  const bound = (list: Candidate[]) => list.reduce<Pico>((m, cand) => maxPico(m, parseUsd(cand.mapping.pricing.prompt) * tokens), 0n);
  const creditPaid = (cand: Candidate) => cand.credential.source === "credits" && bound([cand]) > 0n;
  const routing: RoutingAttempt[] = [];
  const logId = newId("log");
  /** Settlement and record writes; a successful answer is returned once they are durable. */
  const writes: Array<Promise<unknown>> = [];
  const track = (p: Promise<unknown>) => {
    writes.push(p);
    c.executionCtx.waitUntil(p);
  };
  const log = (ctx: KeyContext, statusCode: number, extra: LogExtra) => {
    const bodyBatch = queueBodies(c.env, (p) => c.executionCtx.waitUntil(p), {
      auth: ctx, logId, requestId: c.get("requestId"), createdAt: started, request: compactBody(req),
      response: extra.answer === undefined ? errorBody({ statusCode, errorType: extra.errorType ?? null, errorMessage: extra.error ?? null }) : compactBody(extra.answer),
    });
    track(
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
        usedRegion: extra.usedRegion || null,
        statusCode,
        errorType: extra.error ? (extra.errorType ?? "upstream_error") : null,
        errorMessage: extra.error ?? null,
        costPico: extra.costPico ?? 0n,
        creditsCostPico: extra.credits ? (extra.costPico ?? 0n) : 0n,
        byokCostPico: extra.credits ? 0n : (extra.costPico ?? 0n),
        latencyMs: Date.now() - started,
        routing,
        bodyBatch,
        createdAt: started,
      }),
    );
  };

  // The key's and (credit-paid providers) the organization's reservations, asked at the same time
  // while the first provider's call already runs; nothing of it is released before both answered.
  const first = selected[0];
  const firstProvider = first ? getProvider(first.mapping.providerId) : undefined;
  const earlyCand = first && firstProvider ? { cand: first, provider: firstProvider } : null;
  let early: EarlyAdmitted<ModerationAttempt>;
  try {
    early = await admitWithEarlyCall<ModerationAttempt>(c.env, auth, {
      estimate: bound(selected),
      creditEstimate: selected.some(creditPaid) ? bound(selected.filter(creditPaid)) : null,
      early: earlyCand ? { creditPaid: creditPaid(earlyCand.cand), run: (signal) => callModeration(c.env, earlyCand.cand, earlyCand.provider.baseUrl, req.input, signal) } : null,
      onCancelled: (ms) => {
        if (earlyCand) routing.push({ ...attemptOf(earlyCand.cand, logId), status_code: 499, latency_ms: ms, error_type: "early_cancelled" });
      },
      waitUntil: (p) => c.executionCtx.waitUntil(p),
    });
  } catch (err) {
    // Refused (spend limit, dead key): logged like the other routes' refusals, nothing reserved.
    if (err instanceof ApiError) log(auth, err.status, { error: err.message, errorType: err.code, ...(first ? { usedModel: first.model.id } : {}) });
    throw err;
  }
  const ctx = early.admission.context;
  renewLeasesEarly(c.env, ctx, (p) => c.executionCtx.waitUntil(p));
  let creditsReservationId: string | null = early.credit?.ok ? early.credit.reservationId : null;
  let settled = false;
  const settle = (cost: Pico, credits: boolean) => {
    settled = true;
    track(settleRequest(c.env, ctx, early.admission.reservationId, { totalPico: cost, creditsPico: credits ? cost : 0n }, creditsReservationId).catch(logSettleError));
  };
  try {
    let candidates: Candidate[];
    try {
      // A newer context (rules changed a moment ago): the providers are chosen again under it.
      candidates = early.fresh ? selectCandidates(c.env, ctx, modelRef, clientIp, caller) : selected;
      if (early.credit && !early.credit.ok) {
        candidates = candidates.filter((cand) => !creditPaid(cand));
        if (candidates.length === 0) throw early.credit.error;
      } else if (!early.credit) {
        const credit = await admitCreditCandidates(c.env, ctx.organization.id, candidates, creditPaid, (cand) => bound([cand]));
        candidates = credit.candidates;
        creditsReservationId = credit.reservationId;
      }
    } catch (err) {
      // Refused after admission (new rules, credits): logged like the refusals above, with a cancelled early call if any.
      if (err instanceof ApiError) log(ctx, err.status, { error: err.message, errorType: err.code, ...(first ? { usedModel: first.model.id } : {}) });
      throw err;
    }
    const take = (cand: Candidate) => (earlyCand && cand === earlyCand.cand ? early.take() : null);
    return await moderate(c, { req, candidates, logId, routing, caller, log: (status, extra) => log(ctx, status, extra), take, settle, recorded: () => Promise.all(writes) });
  } finally {
    early.drop();
    if (!settled) settle(0n, false);
  }
});

const logSettleError = (err: unknown) => console.error("moderation settlement failed", err instanceof Error ? err.message : String(err));

/** A routing record for a candidate, before its answer. */
function attemptOf(cand: Candidate, logId: string): RoutingAttempt {
  const attempt: RoutingAttempt = { provider: cand.mapping.providerId, model: cand.mapping.externalId, status_code: 0, succeeded: false, credentialSource: cand.credential.source, logId };
  if (cand.region) attempt.region = cand.region;
  if ("providerKey" in cand.credential) {
    attempt.providerKeyId = cand.credential.providerKey.id;
    if (cand.credential.providerKey.label) attempt.providerKeyLabel = cand.credential.providerKey.label;
  }
  return attempt;
}

interface ModerationRun {
  req: z.infer<typeof body>;
  candidates: Candidate[];
  logId: string;
  routing: RoutingAttempt[];
  /** The caller's continent: the live metrics series its attempts are recorded in too. */
  caller: Continent | null;
  log: (statusCode: number, extra: LogExtra) => void;
  /** The early call's answer for this candidate, if it ran one (once). */
  take: (cand: Candidate) => Promise<ModerationAttempt> | null;
  settle: (cost: Pico, credits: boolean) => void;
  /** Resolves once the settlement and record written so far are durable. */
  recorded: () => Promise<unknown>;
}

async function moderate(c: Context<AppEnv>, run: ModerationRun): Promise<Response> {
  const samples = new DoorSamples();
  try {
    return await moderateWith(c, run, samples);
  } finally {
    samples.report(c.env, (p) => c.executionCtx.waitUntil(p), run.caller);
  }
}

async function moderateWith(c: Context<AppEnv>, run: ModerationRun, samples: DoorSamples): Promise<Response> {
  const { req, candidates, logId, routing, log } = run;
  let lastError: ApiError | null = null;
  for (const cand of candidates) {
    const provider = getProvider(cand.mapping.providerId);
    if (!provider) continue;
    const attempt = attemptOf(cand, logId);
    routing.push(attempt);
    const r = await (run.take(cand) ?? callModeration(c.env, cand, provider.baseUrl, req.input));
    if (r.apiKeyHash) attempt.apiKeyHash = r.apiKeyHash;
    attempt.latency_ms = r.ms;
    const ok = r.status >= 200 && r.status < 300;
    const answered = ok && r.json !== null && Array.isArray(r.json.results);
    // A 2xx without results is the provider's fault.
    samples.add(cand, cand.model.id, answered ? "ok" : ok ? "error" : outcomeOfStatus(r.status), r.ms);
    if (r.status === 0) {
      attempt.status_code = 502;
      attempt.error_type = "network_error";
      lastError = new ApiError(502, `Provider ${provider.id} could not be reached`, { type: "upstream_error", code: "upstream_unreachable" });
      continue;
    }
    attempt.status_code = r.status;
    const json = r.json;
    if (!answered || !json) {
      attempt.error_type = r.status >= 500 || ok ? "upstream_error" : "client_error";
      const upstreamMsg = (json?.error as { message?: unknown } | undefined)?.message;
      const message = `Provider ${provider.id} answered ${r.status}${typeof upstreamMsg === "string" ? `: ${upstreamMsg.slice(0, 300)}` : ""}`;
      if (ok || r.status >= 500 || r.status === 429) {
        lastError = new ApiError(502, message, { type: "upstream_error", code: "upstream_error" });
        continue;
      }
      log(r.status, { usedProvider: provider.id, error: message, usedModel: cand.model.id });
      if (r.status === 401 || r.status === 403) throw new ApiError(502, message, { type: "upstream_error", code: "upstream_rejected" });
      throw upstreamRejection(r.status, message);
    }
    attempt.succeeded = true;
    const tokens = promptTokensOf(json);
    const cost = tokens > 0 ? parseUsd(cand.mapping.pricing.prompt) * BigInt(tokens) : 0n;
    const credits = cand.credential.source === "credits";
    run.settle(cost, credits);
    const answer = {
      id: typeof json.id === "string" ? json.id : `modr-${logId}`,
      model: cand.model.id,
      results: (json.results as unknown[]).map(normalizeResult),
    };
    log(200, { usedProvider: provider.id, usedRegion: cand.region, costPico: cost, credits, usedModel: cand.model.id, answer });
    await run.recorded();
    return c.json(answer);
  }
  const err = lastError ?? new ApiError(502, "No provider answered", { type: "upstream_error", code: "upstream_error" });
  // Attributed to the last attempt's provider and the canonical model (analytics), as chat's.
  const last = routing[routing.length - 1];
  const model = candidates[0]?.model.id;
  log(err.status, { error: err.message, ...(last ? { usedProvider: last.provider } : {}), ...(model ? { usedModel: model } : {}) });
  throw err;
}

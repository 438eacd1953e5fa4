/**
 * IAM evaluation (spec section 5), a pure function called by routing (once per candidate
 * provider mapping), the models catalogue and moderation. The IP rules alone
 * (`evaluateClientIp`) are also applied when a key authenticates, on every door that takes one
 * (src/auth/gateway-key.ts, src/mcp/auth.ts), so doors without a model (analytics, token counts,
 * the catalogue) refuse an outside client too.
 *
 * Within one layer:
 *  1. allow rules of the same type are unioned (a request passes if it matches any of them);
 *  2. allow rules of different types are ANDed (every configured allow type must be satisfied);
 *  3. a matching deny rule rejects regardless of allow rules.
 * Layers are evaluated team -> member -> key and the request must pass every layer, so each layer
 * can only narrow what the previous one allowed. Team rules apply when the key's creator has the
 * developer role; member and team rules apply to every regular (non-playground) key the member
 * created. Moderation requests skip model and pricing rules. An `allow_ip_cidrs` or
 * `deny_ip_cidrs` rule with no known client IP denies (fail closed: an address that cannot be read
 * cannot be shown to be outside a denied range).
 *
 * Rule arrays are compiled once (CIDRs parsed, lists turned into sets) and cached in a WeakMap keyed
 * by the array, which lives as long as the cached KeyContext.
 *
 * Residency (`allow_regions` / `deny_regions`) applies to requests that name the serving endpoint's
 * region (every door that calls a provider, and the catalogue); an entry is a region or a continent
 * code, and under `allow_regions` a global endpoint matches nothing (src/routing/regions.ts).
 */
import type { KeyContext, IamRuleRecord } from "../context/key-context";
import type { RuleLevel, RuleType } from "../db/schema";
import { permissionDenied } from "../errors/api-error";
import { ipInCidr, parseCidr, parseIp, type Cidr, type IpAddress } from "./cidr";
import { regionMatches } from "../routing/regions";

export interface AccessRequest {
  /** Canonical model id, or `<customProvider>/<model>` for custom models. */
  model: string;
  /** Provider id (`openai`, ...) or `custom:<name>` for a custom provider. */
  provider: string;
  /** Whether the model/mapping is free (pricing rules). */
  free: boolean;
  /** The client IP (contract section 6: CF-Connecting-IP, else first X-Forwarded-For), or null. */
  clientIp: string | null;
  /** Moderation requests skip model and pricing rules. */
  kind: "chat" | "image" | "video" | "moderation" | "catalog";
  /**
   * The region of the endpoint that would serve (`""` for a global one; src/routing/regions.ts).
   * Absent: the request is not region-scoped, and `allow_regions` / `deny_regions` do not apply.
   */
  region?: string;
}

export type AccessDecision =
  | { allowed: true }
  | { allowed: false; level: "organization" | "team" | "member" | "key"; message: string; ruleType?: RuleType };

// ---------- compiled rules ----------

interface ProviderSet {
  ids: Set<string>;
  /** Entry `custom`: every custom provider of the organization. */
  anyCustom: boolean;
}

interface CompiledLayer {
  empty: boolean;
  allowModels: Set<string> | null;
  denyModels: Set<string> | null;
  allowProviders: ProviderSet | null;
  denyProviders: ProviderSet | null;
  allowPricing: Set<"free" | "paid"> | null;
  denyPricing: Set<"free" | "paid"> | null;
  allowIp: Cidr[] | null;
  denyIp: Cidr[] | null;
  allowRegions: string[] | null;
  denyRegions: string[] | null;
}

const compiledLayers = new WeakMap<readonly IamRuleRecord[], CompiledLayer>();

const addAll = <T>(target: Set<T> | null, values: Iterable<T>): Set<T> => {
  const s = target ?? new Set<T>();
  for (const v of values) s.add(v);
  return s;
};

function addProviders(target: ProviderSet | null, values: readonly string[]): ProviderSet {
  const s = target ?? { ids: new Set<string>(), anyCustom: false };
  for (const raw of values) {
    const v = raw.trim().toLowerCase();
    if (v === "custom") s.anyCustom = true;
    else s.ids.add(v);
  }
  return s;
}

const addCidrs = (target: Cidr[] | null, values: readonly string[]): Cidr[] => {
  const out = target ?? [];
  for (const v of values) {
    const c = parseCidr(v);
    // Stored rules were validated on creation; an unparsable entry simply never matches.
    if (c) out.push(c);
  }
  return out;
};

/** Compiles a layer's rules (cached per array). Exported for tests. */
export function compileLayer(rules: readonly IamRuleRecord[]): CompiledLayer {
  const cached = compiledLayers.get(rules);
  if (cached) return cached;
  const l: CompiledLayer = {
    empty: rules.length === 0,
    allowModels: null,
    denyModels: null,
    allowProviders: null,
    denyProviders: null,
    allowPricing: null,
    denyPricing: null,
    allowIp: null,
    denyIp: null,
    allowRegions: null,
    denyRegions: null,
  };
  for (const r of rules) {
    const v = r.ruleValue;
    switch (r.ruleType) {
      case "allow_models":
        l.allowModels = addAll(l.allowModels, (v.canonicalModels ?? v.models ?? []).map(normModel));
        break;
      case "deny_models":
        l.denyModels = addAll(l.denyModels, (v.canonicalModels ?? v.models ?? []).map(normModel));
        break;
      case "allow_providers":
        l.allowProviders = addProviders(l.allowProviders, v.providers ?? []);
        break;
      case "deny_providers":
        l.denyProviders = addProviders(l.denyProviders, v.providers ?? []);
        break;
      case "allow_pricing":
        l.allowPricing = addAll(l.allowPricing, v.pricingType ? [v.pricingType] : []);
        break;
      case "deny_pricing":
        l.denyPricing = addAll(l.denyPricing, v.pricingType ? [v.pricingType] : []);
        break;
      case "allow_ip_cidrs":
        l.allowIp = addCidrs(l.allowIp, v.ipCidrs ?? []);
        break;
      case "deny_ip_cidrs":
        l.denyIp = addCidrs(l.denyIp, v.ipCidrs ?? []);
        break;
      case "allow_regions":
        l.allowRegions = [...(l.allowRegions ?? []), ...(v.regions ?? [])];
        break;
      case "deny_regions":
        l.denyRegions = [...(l.denyRegions ?? []), ...(v.regions ?? [])];
        break;
    }
  }
  compiledLayers.set(rules, l);
  return l;
}

// ---------- matching ----------

const normModel = (m: string): string => m.trim().toLowerCase();

/** A model entry matches the model id itself or the pinned form `<provider>/<model>`. */
function modelMatches(set: Set<string>, req: AccessRequest): boolean {
  const model = normModel(req.model);
  if (set.has(model)) return true;
  return set.has(`${req.provider.toLowerCase()}/${model}`);
}

function providerMatches(set: ProviderSet, provider: string): boolean {
  const p = provider.toLowerCase();
  if (set.ids.has(p)) return true;
  return set.anyCustom && p.startsWith("custom:");
}

const ipMatches = (cidrs: readonly Cidr[], ip: IpAddress): boolean => cidrs.some((c) => ipInCidr(ip, c));

let lastIpText: string | null = null;
let lastIp: IpAddress | null = null;
function clientAddress(text: string | null): IpAddress | null {
  if (text === null) return null;
  if (text !== lastIpText) {
    lastIpText = text;
    lastIp = parseIp(text);
  }
  return lastIp;
}

// ---------- messages (spec 5.8) ----------

const SOURCE: Record<RuleLevel, string> = {
  key: "by an IAM rule on this API key",
  member: "by an organization member IAM rule set by the org admin",
  team: "by a rule inherited from an organization team IAM rule",
};

function deny(level: RuleLevel, ruleType: RuleType, reason: string): AccessDecision {
  return { allowed: false, level, ruleType, message: `Access denied: ${reason} (${ruleType}), ${SOURCE[level]}.` };
}

export function evaluateLayer(level: RuleLevel, l: CompiledLayer, req: AccessRequest): AccessDecision | null {
  if (l.empty) return null;
  const scoped = req.kind !== "moderation"; // moderation: only provider and IP rules
  const pricing: "free" | "paid" = req.free ? "free" : "paid";
  const ip = l.allowIp || l.denyIp ? clientAddress(req.clientIp) : null;

  // Deny rules win over everything.
  if (scoped && l.denyModels && modelMatches(l.denyModels, req)) return deny(level, "deny_models", `model '${req.model}' is denied`);
  if (l.denyProviders && providerMatches(l.denyProviders, req.provider)) return deny(level, "deny_providers", `provider '${req.provider}' is denied`);
  if (scoped && l.denyPricing?.has(pricing)) return deny(level, "deny_pricing", `${pricing} models are denied`);
  const deniedIp = denyIpDecision(level, l, ip);
  if (deniedIp) return deniedIp;
  if (req.region !== undefined && l.denyRegions?.some((e) => regionMatches(e, req.region ?? ""))) {
    return deny(level, "deny_regions", `region '${req.region}' of provider '${req.provider}' is denied`);
  }

  // Every configured allow type must be satisfied.
  if (scoped && l.allowModels && !modelMatches(l.allowModels, req)) return deny(level, "allow_models", `model '${req.model}' is not in the allowed models`);
  if (l.allowProviders && !providerMatches(l.allowProviders, req.provider)) return deny(level, "allow_providers", `provider '${req.provider}' is not in the allowed providers`);
  if (scoped && l.allowPricing && !l.allowPricing.has(pricing)) return deny(level, "allow_pricing", `${pricing} models are not allowed`);
  if (req.region !== undefined && l.allowRegions && !l.allowRegions.some((e) => regionMatches(e, req.region ?? ""))) {
    const where = req.region ? `region '${req.region}'` : "a global endpoint (no region)";
    return deny(level, "allow_regions", `${where} of provider '${req.provider}' is not in the allowed regions (${l.allowRegions.join(", ")})`);
  }
  return allowIpDecision(level, l, ip);
}

function denyIpDecision(level: RuleLevel, l: CompiledLayer, ip: IpAddress | null): AccessDecision | null {
  if (!l.denyIp) return null;
  if (!ip) return deny(level, "deny_ip_cidrs", "the client IP could not be determined and some IP ranges are denied");
  if (ipMatches(l.denyIp, ip)) return deny(level, "deny_ip_cidrs", `client IP ${ip.toString()} is in a denied range`);
  return null;
}

function allowIpDecision(level: RuleLevel, l: CompiledLayer, ip: IpAddress | null): AccessDecision | null {
  if (!l.allowIp) return null;
  if (!ip) return deny(level, "allow_ip_cidrs", "the client IP could not be determined (no CF-Connecting-IP or X-Forwarded-For header) and IP ranges are restricted");
  if (!ipMatches(l.allowIp, ip)) return deny(level, "allow_ip_cidrs", `client IP ${ip.toString()} is not in the allowed ranges`);
  return null;
}

/** Only the IP rules of one layer (deny before allow, as in `evaluateLayer`). */
function evaluateIpLayer(level: RuleLevel, l: CompiledLayer, clientIp: string | null): AccessDecision | null {
  if (!l.allowIp && !l.denyIp) return null;
  const ip = clientAddress(clientIp);
  return denyIpDecision(level, l, ip) ?? allowIpDecision(level, l, ip);
}

/** Whether member and team rules bind this key (every regular key its creator made). */
const bindsMemberRules = (ctx: KeyContext): boolean => ctx.key.kind !== "playground";

/** The layers that bind a key, in evaluation order: team (developers) -> member -> key. */
function bindingLayers(ctx: KeyContext): Array<[RuleLevel, readonly IamRuleRecord[]]> {
  const { rules } = ctx;
  const out: Array<[RuleLevel, readonly IamRuleRecord[]]> = [];
  if (bindsMemberRules(ctx)) {
    if (ctx.member.role === "developer") out.push(["team", rules.team]);
    out.push(["member", rules.member]);
  }
  out.push(["key", rules.key]);
  return out;
}

/** The organization's residency (`compliance.regions`): the same filter as an `allow_regions` rule, for every key. */
function complianceRegionDecision(ctx: KeyContext, req: AccessRequest): AccessDecision | null {
  const regions = ctx.organization.compliance.regions;
  if (req.region === undefined || !regions?.length || regions.some((e) => regionMatches(e, req.region ?? ""))) return null;
  const where = req.region ? `region '${req.region}'` : "a global endpoint (no region)";
  return {
    allowed: false,
    level: "organization",
    message: `Access denied: ${where} of provider '${req.provider}' is not in the organization's compliance regions (${regions.join(", ")}).`,
  };
}

export function evaluateAccess(ctx: KeyContext, req: AccessRequest): AccessDecision {
  const residency = complianceRegionDecision(ctx, req);
  if (residency) return residency;
  const { rules } = ctx;
  if (rules.team.length === 0 && rules.member.length === 0 && rules.key.length === 0) return { allowed: true };
  for (const [level, layer] of bindingLayers(ctx)) {
    const d = evaluateLayer(level, compileLayer(layer), req);
    if (d) return d;
  }
  return { allowed: true };
}

/**
 * The IP rules of every layer that binds the key, and nothing else: what authentication applies
 * on every door that takes a key, before anything is answered.
 */
export function evaluateClientIp(ctx: KeyContext, clientIp: string | null): AccessDecision {
  const { rules } = ctx;
  if (rules.team.length === 0 && rules.member.length === 0 && rules.key.length === 0) return { allowed: true };
  for (const [level, layer] of bindingLayers(ctx)) {
    const d = evaluateIpLayer(level, compileLayer(layer), clientIp);
    if (d) return d;
  }
  return { allowed: true };
}

/** Throws the spec's 403 (`permission_denied`) when access is denied. */
export function assertAccess(ctx: KeyContext, req: AccessRequest): void {
  const d = evaluateAccess(ctx, req);
  if (!d.allowed) throw permissionDenied(d.message);
}

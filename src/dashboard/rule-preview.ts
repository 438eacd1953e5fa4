/**
 * The exact 403 wording a rule produces, for the Access rules page: the rule is evaluated alone by
 * the gateway's own evaluator (src/iam/evaluate.ts) against a sample request it refuses.
 */
import type { RuleLevel, RuleType, RuleValue } from "../db/schema";
import { compileLayer, evaluateLayer, type AccessRequest } from "../iam/evaluate";
import { FIELD_OF } from "../iam/rule-body";
import { listModels } from "../catalog";
import { isContinent } from "../routing/regions";

/** Addresses an allowed-range rule is shown refusing (the first one outside the ranges); the client script uses the same list. */
export const OUTSIDE_IPS = ["203.0.113.7", "198.51.100.7", "2001:db8::7", "192.0.2.7"];

function samples(ruleType: RuleType, v: RuleValue): Array<Partial<AccessRequest>> {
  const allow = ruleType.startsWith("allow_");
  switch (FIELD_OF[ruleType]) {
    case "models":
      return [{ model: allow ? "another-model" : (v.models?.[0] ?? "gpt-4o") }];
    case "providers": {
      const first = v.providers?.[0] ?? "openai";
      return [{ provider: allow ? "another-provider" : first === "custom" ? "custom:example" : first }];
    }
    case "pricingType":
      return [{ free: allow ? v.pricingType !== "free" : v.pricingType === "free" }];
    case "ipCidrs":
      return allow ? OUTSIDE_IPS.map((clientIp) => ({ clientIp })) : [{ clientIp: (v.ipCidrs?.[0] ?? "10.0.0.0/8").split("/")[0] ?? null }];
    case "regions": {
      const first = v.regions?.[0] ?? "EU";
      return allow ? SAMPLE_REGIONS.map((region) => ({ region })) : [{ region: isContinent(first) ? (CONTINENT_SAMPLE[first] ?? first) : first }];
    }
  }
}

/** Regions an allowed-regions rule is shown refusing (the first one outside the list). */
const SAMPLE_REGIONS = ["ap-south-1", "us-east-1", "eu-central-1", ""];
/** A region of each continent, for a denied continent's preview. */
const CONTINENT_SAMPLE: Record<string, string> = { NA: "us-east-1", SA: "sa-east-1", EU: "eu-central-1", AF: "af-south-1", AS: "ap-northeast-1", OC: "ap-southeast-2" };

/** `Access denied: ... (ruleType), by ...` or null when no sample is refused. */
export function denialPreview(level: RuleLevel, ruleType: RuleType, ruleValue: RuleValue): string | null {
  const layer = compileLayer([{ id: "preview", level, targetId: "preview", ruleType, ruleValue }]);
  for (const s of samples(ruleType, ruleValue)) {
    const d = evaluateLayer(level, layer, { model: "gpt-4o", provider: "openai", free: false, clientIp: null, kind: "chat", ...s });
    if (d && !d.allowed) return d.message;
  }
  return null;
}

/** Sample values per rule type for the "add rule" form's preview. */
export const SAMPLE_VALUES: Record<RuleType, RuleValue> = {
  allow_models: { models: ["gpt-4o-mini"] },
  deny_models: { models: ["gpt-4o"] },
  allow_providers: { providers: ["openai"] },
  deny_providers: { providers: ["openai"] },
  allow_pricing: { pricingType: "free" },
  deny_pricing: { pricingType: "paid" },
  allow_ip_cidrs: { ipCidrs: ["10.0.0.0/8"] },
  deny_ip_cidrs: { ipCidrs: ["10.0.0.0/8"] },
  allow_regions: { regions: ["EU"] },
  deny_regions: { regions: ["us-east-1"] },
};

/**
 * The word of each sample message that names what is refused: the "add rule" form's script swaps it
 * for the value computed from what is typed (the first denied model, a model outside an allow list,
 * the chosen pricing, an address in or outside the ranges), so the preview follows the form.
 */
export const PREVIEW_SAMPLE: Record<RuleType, string> = {
  allow_models: "another-model",
  deny_models: "gpt-4o",
  allow_providers: "another-provider",
  deny_providers: "openai",
  allow_pricing: "paid",
  deny_pricing: "paid",
  allow_ip_cidrs: "203.0.113.7",
  deny_ip_cidrs: "10.0.0.0",
  allow_regions: "ap-south-1",
  deny_regions: "us-east-1",
};

/**
 * Model ids for examples in the UI (placeholders), taken from the catalogue so they are always
 * accepted: current chat models of different makers.
 */
export function exampleModelIds(n = 2): string[] {
  const out: string[] = [];
  const makers = new Set<string>();
  for (const m of listModels()) {
    if (m.kind !== "chat" || m.deprecatedAt || m.deactivatedAt || makers.has(m.maker)) continue;
    makers.add(m.maker);
    out.push(m.id);
    if (out.length === n) break;
  }
  return out;
}

/**
 * IAM rule bodies (contract section 4): `{ruleType, ruleValue, status?}`. `ruleValue` must carry
 * exactly the field of its type: models / providers / pricingType / ipCidrs / regions. CIDRs are parsed
 * strictly (src/iam/cidr.ts); a single address must be written /32 or /128.
 */
import * as z from "zod";
import { RULE_TYPES, type RuleType, type RuleValue } from "../db/schema";
import { PROVIDER_IDS } from "../catalog/types";
import { parseCidr } from "./cidr";
import { isRegionEntry } from "../routing/regions";

export type RuleField = Exclude<keyof RuleValue, "canonicalModels">;

export const FIELD_OF: Record<RuleType, RuleField> = {
  allow_models: "models",
  deny_models: "models",
  allow_providers: "providers",
  deny_providers: "providers",
  allow_pricing: "pricingType",
  deny_pricing: "pricingType",
  allow_ip_cidrs: "ipCidrs",
  deny_ip_cidrs: "ipCidrs",
  allow_regions: "regions",
  deny_regions: "regions",
};

export const isIpRule = (t: RuleType): boolean => FIELD_OF[t] === "ipCidrs";

const KNOWN_PROVIDERS = new Set<string>(PROVIDER_IDS);
const CUSTOM_RE = /^custom(:[A-Za-z0-9][A-Za-z0-9._-]{0,63})?$/;

const entryList = (what: string) =>
  z
    .array(z.string().trim().min(1, `${what} entries must be non-empty strings`).max(200))
    .min(1, `at least one ${what} entry is required`)
    .max(500);

const ruleValueSchema = z.strictObject({
  models: entryList("model").optional(),
  providers: entryList("provider")
    .refine((list) => list.every((p) => KNOWN_PROVIDERS.has(p) || CUSTOM_RE.test(p)), {
      message: "unknown provider id (use a provider id, 'custom' or 'custom:<name>')",
    })
    .optional(),
  pricingType: z.enum(["free", "paid"]).optional(),
  ipCidrs: entryList("CIDR").optional(),
  regions: entryList("region")
    .refine((list) => list.every(isRegionEntry), {
      message: "each entry is a region (lower case, e.g. 'eu-central-1') or a continent code (NA, SA, EU, AF, AS, OC)",
    })
    .optional(),
});

const statusSchema = z.enum(["active", "inactive"]);

function checkValue(ruleType: RuleType, value: RuleValue, ctx: z.RefinementCtx, path: (string | number)[]): void {
  const field = FIELD_OF[ruleType];
  if (value[field] === undefined) {
    ctx.addIssue({ code: "custom", path: [...path, field], message: `${ruleType} requires ruleValue.${field}` });
    return;
  }
  for (const other of Object.keys(value).filter((k) => k !== "canonicalModels") as RuleField[]) {
    if (other !== field && value[other] !== undefined) {
      ctx.addIssue({ code: "custom", path: [...path, other], message: `${ruleType} takes only ruleValue.${field}` });
      return;
    }
  }
  if (field === "ipCidrs") {
    (value.ipCidrs ?? []).forEach((c, i) => {
      if (!parseCidr(c)) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "ipCidrs", i],
          message: `'${c}' is not a valid IPv4 or IPv6 CIDR (single addresses are written /32 or /128)`,
        });
      }
    });
  }
}

export const ruleBodySchema = z
  .strictObject({ ruleType: z.enum(RULE_TYPES), ruleValue: ruleValueSchema, status: statusSchema.optional() })
  .superRefine((body, ctx) => checkValue(body.ruleType, body.ruleValue, ctx, ["ruleValue"]));

export type RuleBody = z.infer<typeof ruleBodySchema>;

/** PATCH: any of the fields; a new ruleValue is checked against the (new or stored) type by the service. */
export const rulePatchSchema = z
  .strictObject({ ruleType: z.enum(RULE_TYPES).optional(), ruleValue: ruleValueSchema.optional(), status: statusSchema.optional() })
  .refine((b) => b.ruleType !== undefined || b.ruleValue !== undefined || b.status !== undefined, { message: "nothing to update" });

export type RulePatch = z.infer<typeof rulePatchSchema>;

/** Re-validates a merged rule (PATCH) with the same checks as creation. */
export function validateMergedRule(ruleType: RuleType, ruleValue: RuleValue): { ok: true } | { ok: false; message: string; param: string } {
  const r = ruleBodySchema.safeParse({ ruleType, ruleValue });
  if (r.success) return { ok: true };
  const issue = r.error.issues[0];
  const param = issue?.path.length ? issue.path.map(String).join(".") : "ruleValue";
  return { ok: false, message: `Invalid value for '${param}': ${issue?.message ?? "invalid rule"}`, param };
}

/** Normalizes a validated value (trims, drops duplicates) before storing. */
export function normalizeRuleValue(ruleType: RuleType, value: RuleValue): RuleValue {
  const field = FIELD_OF[ruleType];
  const dedupe = (xs: string[] | undefined) => [...new Set((xs ?? []).map((x) => x.trim()))];
  switch (field) {
    case "models":
      return { models: dedupe(value.models) };
    case "providers":
      return { providers: dedupe(value.providers) };
    case "pricingType":
      return value.pricingType ? { pricingType: value.pricingType } : {};
    case "ipCidrs":
      return { ipCidrs: dedupe(value.ipCidrs) };
    case "regions":
      return { regions: dedupe(value.regions) };
  }
}

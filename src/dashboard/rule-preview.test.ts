import { describe, expect, it } from "vitest";
import { denialPreview, exampleModelIds, PREVIEW_SAMPLE, SAMPLE_VALUES } from "./rule-preview";
import { canonicalModelRefs } from "../iam/model-refs";
import { RULE_TYPES } from "../db/schema";

describe("denialPreview", () => {
  it("gives the gateway's own 403 wording for a deny rule at each level", () => {
    expect(denialPreview("key", "deny_models", { models: ["gpt-4o"] })).toBe("Access denied: model 'gpt-4o' is denied (deny_models), by an IAM rule on this API key.");
    expect(denialPreview("member", "deny_providers", { providers: ["anthropic"] })).toBe(
      "Access denied: provider 'anthropic' is denied (deny_providers), by an organization member IAM rule set by the org admin.",
    );
    expect(denialPreview("team", "allow_pricing", { pricingType: "free" })).toBe(
      "Access denied: paid models are not allowed (allow_pricing), by a rule inherited from an organization team IAM rule.",
    );
  });

  it("finds a refused sample for every rule type", () => {
    for (const t of RULE_TYPES) expect(denialPreview("key", t, SAMPLE_VALUES[t]), t).toMatch(new RegExp(`^Access denied: .*\\(${t}\\), by an IAM rule on this API key\\.$`));
  });

  it("shows an allowed-range IP rule with an address outside the range", () => {
    expect(denialPreview("key", "allow_ip_cidrs", { ipCidrs: ["203.0.113.0/24"] })).toBe(
      "Access denied: client IP 198.51.100.7 is not in the allowed ranges (allow_ip_cidrs), by an IAM rule on this API key.",
    );
  });

  it("names the refused value with the word the form's script replaces (the preview follows what is typed)", () => {
    for (const t of RULE_TYPES) expect(denialPreview("key", t, SAMPLE_VALUES[t]), t).toContain(PREVIEW_SAMPLE[t]);
  });
});

describe("exampleModelIds", () => {
  it("gives catalogue ids the rule validation accepts (an id the catalogue lacks is refused)", () => {
    const ids = exampleModelIds(2);
    expect(ids).toHaveLength(2);
    expect(canonicalModelRefs(ids, [])).toMatchObject({ ok: true });
    expect(canonicalModelRefs(["claude-opus-0"], [])).toMatchObject({ ok: false });
  });
});

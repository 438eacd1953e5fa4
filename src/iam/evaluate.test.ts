import { describe, expect, it } from "vitest";
import type { IamRuleRecord, KeyContext } from "../context/key-context";
import type { Role, RuleLevel, RuleType, RuleValue } from "../db/schema";
import { ApiError } from "../errors/api-error";
import { assertAccess, evaluateAccess, type AccessRequest } from "./evaluate";

let n = 0;
const rule = (level: RuleLevel, ruleType: RuleType, ruleValue: RuleValue): IamRuleRecord => ({ id: `iam_${++n}`, level, targetId: "t", ruleType, ruleValue });

function ctx(opts: { key?: IamRuleRecord[]; member?: IamRuleRecord[]; team?: IamRuleRecord[]; role?: Role; kind?: "standard" | "playground" | "coding-plan" } = {}): KeyContext {
  return {
    key: {
      id: "key_1",
      organizationId: "org_1",
      projectId: "proj_1",
      createdBy: "mem_1",
      description: "",
      kind: opts.kind ?? "standard",
      status: "active",
      fingerprint: "fp",
      expiresAt: null,
      usageLimit: null,
      periodUsageLimit: null,
      periodUsageDurationValue: null,
      periodUsageDurationUnit: null,
      version: 1,
    },
    organization: { id: "org_1", name: "Org", plan: "enterprise", compliance: {}, notifications: {} },
    project: { id: "proj_1", name: "P", mode: "hybrid", cachingEnabled: true, cacheDurationSeconds: 60, logBodies: false },
    member: { id: "mem_1", role: opts.role ?? "developer", userId: "u", email: "d@x.test", name: "D", teamIds: ["team_1"] },
    rules: { key: opts.key ?? [], member: opts.member ?? [], team: opts.team ?? [] },
    customProviders: [],
    customModels: [],
    providerKeys: [],
    loadedAt: 0,
  };
}

const req = (over: Partial<AccessRequest> = {}): AccessRequest => ({
  model: "gpt-4o-mini",
  provider: "openai",
  free: false,
  clientIp: "203.0.113.7",
  kind: "chat",
  ...over,
});

const allowed = (c: KeyContext, r: AccessRequest) => evaluateAccess(c, r).allowed;

describe("IAM evaluation: no rules", () => {
  it("a key without rules at any level has unrestricted access", () => {
    expect(evaluateAccess(ctx(), req())).toEqual({ allowed: true });
    expect(allowed(ctx(), req({ model: "anything", provider: "custom:acme", clientIp: null }))).toBe(true);
  });
});

describe("IAM evaluation: model rules", () => {
  it("allow_models admits listed models only", () => {
    const c = ctx({ key: [rule("key", "allow_models", { models: ["gpt-4o-mini"] })] });
    expect(allowed(c, req())).toBe(true);
    const d = evaluateAccess(c, req({ model: "gpt-4o" }));
    expect(d).toMatchObject({ allowed: false, level: "key", ruleType: "allow_models" });
  });

  it("deny_models rejects listed models", () => {
    const c = ctx({ key: [rule("key", "deny_models", { models: ["gpt-4o"] })] });
    expect(allowed(c, req({ model: "gpt-4o" }))).toBe(false);
    expect(allowed(c, req({ model: "gpt-4o-mini" }))).toBe(true);
  });

  it("model entries match case-insensitively and in pinned form <provider>/<model>", () => {
    const c = ctx({ key: [rule("key", "allow_models", { models: ["OpenAI/GPT-4o"] })] });
    expect(allowed(c, req({ model: "gpt-4o", provider: "openai" }))).toBe(true);
    expect(allowed(c, req({ model: "gpt-4o", provider: "azure" }))).toBe(false);
  });

  it("custom-catalog models are referenced as <name>/<model>", () => {
    const c = ctx({ key: [rule("key", "allow_models", { models: ["acme/llama-local"] })] });
    expect(allowed(c, req({ model: "acme/llama-local", provider: "custom:acme" }))).toBe(true);
    expect(allowed(c, req({ model: "acme/other", provider: "custom:acme" }))).toBe(false);
  });
});

describe("IAM evaluation: provider rules", () => {
  it("allow_providers and deny_providers", () => {
    const allow = ctx({ key: [rule("key", "allow_providers", { providers: ["anthropic"] })] });
    expect(allowed(allow, req({ provider: "anthropic" }))).toBe(true);
    expect(evaluateAccess(allow, req({ provider: "openai" }))).toMatchObject({ allowed: false, ruleType: "allow_providers" });
    const deny = ctx({ key: [rule("key", "deny_providers", { providers: ["openai"] })] });
    expect(evaluateAccess(deny, req())).toMatchObject({ allowed: false, ruleType: "deny_providers" });
    expect(allowed(deny, req({ provider: "anthropic" }))).toBe(true);
  });

  it("'custom' matches every custom provider, 'custom:<name>' exactly one", () => {
    const any = ctx({ key: [rule("key", "allow_providers", { providers: ["custom"] })] });
    expect(allowed(any, req({ provider: "custom:acme", model: "acme/m" }))).toBe(true);
    expect(allowed(any, req({ provider: "custom:beta", model: "beta/m" }))).toBe(true);
    expect(allowed(any, req({ provider: "openai" }))).toBe(false);
    const one = ctx({ key: [rule("key", "allow_providers", { providers: ["custom:acme"] })] });
    expect(allowed(one, req({ provider: "custom:acme", model: "acme/m" }))).toBe(true);
    expect(allowed(one, req({ provider: "custom:beta", model: "beta/m" }))).toBe(false);
    const denyAll = ctx({ key: [rule("key", "deny_providers", { providers: ["custom"] })] });
    expect(allowed(denyAll, req({ provider: "custom:acme", model: "acme/m" }))).toBe(false);
    expect(allowed(denyAll, req())).toBe(true);
  });
});

describe("IAM evaluation: pricing rules", () => {
  it("allow_pricing free admits only free models; deny_pricing paid rejects paid ones", () => {
    const allowFree = ctx({ key: [rule("key", "allow_pricing", { pricingType: "free" })] });
    expect(allowed(allowFree, req({ free: true }))).toBe(true);
    expect(evaluateAccess(allowFree, req({ free: false }))).toMatchObject({ allowed: false, ruleType: "allow_pricing" });
    const denyPaid = ctx({ key: [rule("key", "deny_pricing", { pricingType: "paid" })] });
    expect(allowed(denyPaid, req({ free: false }))).toBe(false);
    expect(allowed(denyPaid, req({ free: true }))).toBe(true);
    const allowPaid = ctx({ key: [rule("key", "allow_pricing", { pricingType: "paid" })] });
    expect(allowed(allowPaid, req({ free: true }))).toBe(false);
  });
});

describe("IAM evaluation: IP rules", () => {
  it("allow_ip_cidrs with IPv4 and IPv6 ranges mixed in one rule", () => {
    const c = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["10.0.0.0/8", "2001:db8::/32", "198.51.100.4/32"] })] });
    expect(allowed(c, req({ clientIp: "10.1.2.3" }))).toBe(true);
    expect(allowed(c, req({ clientIp: "198.51.100.4" }))).toBe(true);
    expect(allowed(c, req({ clientIp: "198.51.100.5" }))).toBe(false);
    expect(allowed(c, req({ clientIp: "2001:db8:1::5" }))).toBe(true);
    expect(allowed(c, req({ clientIp: "2001:db9::1" }))).toBe(false);
    expect(allowed(c, req({ clientIp: "11.0.0.1" }))).toBe(false);
  });

  it("an IPv4-mapped IPv6 client address is matched as IPv4", () => {
    const c = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["10.0.0.0/8"] })] });
    expect(allowed(c, req({ clientIp: "::ffff:10.0.0.1" }))).toBe(true);
  });

  it("a single address as /128", () => {
    const c = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["2001:db8::1/128"] })] });
    expect(allowed(c, req({ clientIp: "2001:db8::1" }))).toBe(true);
    expect(allowed(c, req({ clientIp: "2001:db8::2" }))).toBe(false);
  });

  it("an allow_ip_cidrs rule denies when the client IP is unknown or invalid", () => {
    const c = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["0.0.0.0/0", "::/0"] })] });
    expect(allowed(c, req({ clientIp: "1.2.3.4" }))).toBe(true);
    const d = evaluateAccess(c, req({ clientIp: null }));
    expect(d).toMatchObject({ allowed: false, ruleType: "allow_ip_cidrs" });
    // The message names both headers the IP is read from, CF-Connecting-IP first (contract section 6).
    expect(d.allowed ? "" : d.message).toContain("CF-Connecting-IP");
    expect(allowed(c, req({ clientIp: "not-an-ip" }))).toBe(false);
  });

  it("deny_ip_cidrs rejects matching addresses; an unknown IP is denied too (fail closed)", () => {
    const c = ctx({ key: [rule("key", "deny_ip_cidrs", { ipCidrs: ["192.0.2.0/24", "fd00::/8"] })] });
    expect(allowed(c, req({ clientIp: "192.0.2.9" }))).toBe(false);
    expect(allowed(c, req({ clientIp: "fd12::1" }))).toBe(false);
    expect(allowed(c, req({ clientIp: "192.0.3.9" }))).toBe(true);
    expect(allowed(c, req({ clientIp: null }))).toBe(false);
  });
});

describe("IAM evaluation: combining rules (spec 5.1-5.3)", () => {
  it("allow rules of the same type are unioned", () => {
    const c = ctx({
      key: [rule("key", "allow_models", { models: ["gpt-4o"] }), rule("key", "allow_models", { models: ["claude-sonnet-4"] })],
    });
    expect(allowed(c, req({ model: "gpt-4o" }))).toBe(true);
    expect(allowed(c, req({ model: "claude-sonnet-4", provider: "anthropic" }))).toBe(true);
    expect(allowed(c, req({ model: "o3" }))).toBe(false);
  });

  it("allow rules of different types are ANDed", () => {
    const c = ctx({
      key: [rule("key", "allow_models", { models: ["gpt-4o"] }), rule("key", "allow_providers", { providers: ["azure"] })],
    });
    expect(allowed(c, req({ model: "gpt-4o", provider: "azure" }))).toBe(true);
    expect(allowed(c, req({ model: "gpt-4o", provider: "openai" }))).toBe(false);
    expect(allowed(c, req({ model: "o3", provider: "azure" }))).toBe(false);
  });

  it("a matching deny wins over a matching allow", () => {
    const c = ctx({
      key: [rule("key", "allow_models", { models: ["gpt-4o"] }), rule("key", "deny_providers", { providers: ["openai"] })],
    });
    expect(evaluateAccess(c, req({ model: "gpt-4o" }))).toMatchObject({ allowed: false, ruleType: "deny_providers" });
    expect(allowed(c, req({ model: "gpt-4o", provider: "azure" }))).toBe(true);
    const same = ctx({ key: [rule("key", "allow_models", { models: ["gpt-4o"] }), rule("key", "deny_models", { models: ["gpt-4o"] })] });
    expect(allowed(same, req({ model: "gpt-4o" }))).toBe(false);
  });
});

describe("IAM evaluation: moderation (spec 5.4)", () => {
  it("skips model and pricing rules, keeps provider and IP rules", () => {
    const c = ctx({
      key: [
        rule("key", "allow_models", { models: ["gpt-4o"] }),
        rule("key", "deny_models", { models: ["omni-moderation-latest"] }),
        rule("key", "allow_pricing", { pricingType: "free" }),
        rule("key", "deny_pricing", { pricingType: "paid" }),
      ],
    });
    expect(allowed(c, req({ model: "omni-moderation-latest", kind: "moderation" }))).toBe(true);
    expect(allowed(c, req({ model: "omni-moderation-latest", kind: "chat" }))).toBe(false);
    const prov = ctx({ key: [rule("key", "deny_providers", { providers: ["openai"] })] });
    expect(allowed(prov, req({ kind: "moderation" }))).toBe(false);
    const ip = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["10.0.0.0/8"] })] });
    expect(allowed(ip, req({ kind: "moderation", clientIp: "11.0.0.1" }))).toBe(false);
    expect(allowed(ip, req({ kind: "moderation", clientIp: null }))).toBe(false);
    expect(allowed(ip, req({ kind: "moderation", clientIp: "10.0.0.1" }))).toBe(true);
  });
});

describe("IAM evaluation: layers (spec 5.5, 5.8)", () => {
  it("member rules bind keys without rules, with the member-level message", () => {
    const c = ctx({ member: [rule("member", "deny_models", { models: ["gpt-4o"] })] });
    const d = evaluateAccess(c, req({ model: "gpt-4o" }));
    expect(d.allowed).toBe(false);
    if (!d.allowed) {
      expect(d.level).toBe("member");
      expect(d.message).toContain("organization member IAM rule set by the org admin");
    }
  });

  it("team rules apply to developers, with the inherited-team message", () => {
    const team = [rule("team", "allow_providers", { providers: ["anthropic"] })];
    const d = evaluateAccess(ctx({ team, role: "developer" }), req());
    expect(d.allowed).toBe(false);
    if (!d.allowed) {
      expect(d.level).toBe("team");
      expect(d.message).toContain("inherited from an organization team IAM rule");
    }
    expect(allowed(ctx({ team, role: "admin" }), req())).toBe(true);
    expect(allowed(ctx({ team, role: "owner" }), req())).toBe(true);
  });

  it("each layer can only narrow: a key allow cannot widen a member allow", () => {
    const c = ctx({
      member: [rule("member", "allow_models", { models: ["gpt-4o-mini"] })],
      key: [rule("key", "allow_models", { models: ["gpt-4o-mini", "gpt-4o"] })],
    });
    expect(allowed(c, req({ model: "gpt-4o-mini" }))).toBe(true);
    expect(evaluateAccess(c, req({ model: "gpt-4o" }))).toMatchObject({ allowed: false, level: "member" });
  });

  it("a member allow cannot widen a team allow; key rules narrow further", () => {
    const c = ctx({
      team: [rule("team", "allow_providers", { providers: ["openai", "anthropic"] })],
      member: [rule("member", "allow_providers", { providers: ["openai", "anthropic", "mistral"] })],
      key: [rule("key", "allow_providers", { providers: ["openai"] })],
    });
    expect(allowed(c, req())).toBe(true);
    expect(evaluateAccess(c, req({ provider: "mistral" }))).toMatchObject({ allowed: false, level: "team" });
    expect(evaluateAccess(c, req({ provider: "anthropic" }))).toMatchObject({ allowed: false, level: "key" });
  });

  it("key-level denials name the key", () => {
    const d = evaluateAccess(ctx({ key: [rule("key", "deny_models", { models: ["gpt-4o"] })] }), req({ model: "gpt-4o" }));
    expect(d.allowed).toBe(false);
    if (!d.allowed) expect(d.message).toMatch(/IAM rule on this API key/);
  });

  it("member and team rules do not bind the playground key", () => {
    const c = ctx({
      kind: "playground",
      team: [rule("team", "deny_models", { models: ["gpt-4o"] })],
      member: [rule("member", "deny_models", { models: ["gpt-4o"] })],
    });
    expect(allowed(c, req({ model: "gpt-4o" }))).toBe(true);
  });

  it("member rules bind coding-plan keys too", () => {
    const c = ctx({ kind: "coding-plan", member: [rule("member", "deny_models", { models: ["gpt-4o"] })] });
    expect(allowed(c, req({ model: "gpt-4o" }))).toBe(false);
  });

  it("IP rules at member level apply with the member message", () => {
    const d = evaluateAccess(ctx({ member: [rule("member", "deny_ip_cidrs", { ipCidrs: ["203.0.113.0/24"] })] }), req());
    expect(d).toMatchObject({ allowed: false, level: "member", ruleType: "deny_ip_cidrs" });
  });
});

describe("assertAccess", () => {
  it("throws the 403 permission_denied envelope", () => {
    const c = ctx({ key: [rule("key", "deny_models", { models: ["gpt-4o"] })] });
    try {
      assertAccess(c, req({ model: "gpt-4o" }));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      const env = (e as ApiError).toEnvelope();
      expect((e as ApiError).status).toBe(403);
      expect(env.error).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });
    }
    expect(() => assertAccess(c, req())).not.toThrow();
  });

  it("reuses compiled rules (same array, many candidates) and stays correct", () => {
    const c = ctx({ key: [rule("key", "allow_ip_cidrs", { ipCidrs: ["10.0.0.0/8"] })] });
    for (let i = 0; i < 1000; i++) expect(allowed(c, req({ clientIp: `10.0.${i % 256}.1` }))).toBe(true);
  });
});

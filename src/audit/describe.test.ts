import { describe, expect, it } from "vitest";
import { createdId, describeCall, redact } from "./describe";

describe("describeCall", () => {
  it.each([
    ["POST", "/v1/master/keys", "key.create", "key", null],
    ["PATCH", "/v1/master/keys/:id", "key.update", "key", "id"],
    ["POST", "/api/keys/:id/roll", "key.roll", "key", "id"],
    ["DELETE", "/v1/master/provider-keys/:id", "provider_key.delete", "provider_key", "id"],
    ["POST", "/v1/master/keys/:ref/iam", "iam_rule.create", "iam_rule", null],
    ["PATCH", "/v1/master/members/:ref/iam/:ruleId", "iam_rule.update", "iam_rule", "ruleId"],
    ["PATCH", "/v1/master/members/:member/limits", "member_limits.update", "member", "member"],
    ["PATCH", "/v1/master/organization", "organization.update", "organization", null],
    ["POST", "/v1/master/members/:member/invitation", "member.invite", "member", "member"],
    ["POST", "/v1/admin/organizations/:id/credits", "credits.top_up", "organization", "id"],
    ["POST", "/v1/master/webhooks/:id/test", "webhook.test", "webhook", "id"],
    ["PUT", "/v1/master/sso", "sso.update", "sso", null],
  ])("%s %s is %s", (method, path, action, targetType, targetParam) => {
    expect(describeCall(method, path)).toEqual({ action, targetType, targetParam });
  });

  it("reads and sign-ins are not audited; other prefixes neither", () => {
    expect(describeCall("GET", "/v1/master/keys")).toBeNull();
    expect(describeCall("POST", "/api/auth/sign-in")).toBeNull();
    expect(describeCall("POST", "/v1/chat/completions")).toBeNull();
  });
});

describe("redact", () => {
  it("replaces secret-named strings, header objects and values shaped like our secrets, keeping records", () => {
    expect(redact({ apiKey: { id: "key_1", token: "swb_abc", name: "n" }, clientSecret: "x", otlpHeaders: { a: "b" }, note: "sk_live" })).toEqual({
      apiKey: { id: "key_1", token: "[redacted]", name: "n" },
      clientSecret: "[redacted]",
      otlpHeaders: "[redacted]",
      note: "[redacted]",
    });
  });
});

describe("createdId", () => {
  it("finds the id at the top or one level down", () => {
    expect(createdId({ id: "a" })).toBe("a");
    expect(createdId({ rule: { id: "r" } })).toBe("r");
    expect(createdId({ message: "ok" })).toBeNull();
  });
});

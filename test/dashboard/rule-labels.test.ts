/**
 * Rule types and provider ids in the dashboard's rule lists read as names (`allow_models` ->
 * "Allow models", `google-ai-studio` -> "Google AI Studio"); the ids stay the form values.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { signIn } from "./session";

describe("readable rule and provider names", () => {
  it("the Access rules page names rule types and providers; the Organization page names providers", async () => {
    const org = await seedOrg();
    for (const rule of [
      { ruleType: "deny_providers", ruleValue: { providers: ["google-ai-studio", "groq"] } },
      { ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } },
    ]) {
      expect((await call(`/v1/master/keys/${org.keyId}/iam`, { method: "POST", key: org.masterKey, ...json(rule) })).status).toBe(201);
    }
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const get = async (path: string) => (await call(path, { headers: { cookie: s.cookie, accept: "text/html" } })).text();

    const access = await get(`/dashboard/access?key=${org.keyId}`);
    const rows = access.slice(access.indexOf("<tbody>"), access.indexOf("</tbody>"));
    expect(rows).toContain('<td data-label="Rule">Deny providers</td>');
    expect(rows).toContain('<td data-label="Rule">Allow models</td>');
    expect(rows).toContain('<td data-label="Values">Google AI Studio, Groq</td>');
    expect(rows).not.toContain("<code>deny_providers</code>");
    // The form keeps the ids as values and shows the names.
    expect(access).toMatch(/<option value="allow_models"[^>]*>\s*Allow models/);
    expect(access).toMatch(/value="google-ai-studio"[^>]*\/?>\s*Google AI Studio/);

    const organization = await get("/dashboard/organization");
    expect(organization).toMatch(/name="compliance.deniedProviders" value="google-ai-studio"[^>]*\/?>\s*Google AI Studio/);
  });
});

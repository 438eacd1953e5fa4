import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";
import { signIn } from "../../../test/dashboard/session";

interface OrgBody {
  organization: { id: string; credits: string; compliance: { noTraining?: boolean; deniedProviders?: string[] }; notifications: { apiKeyBudgets?: boolean; thresholdPercent: number } };
}

describe("master API: organization", () => {
  it("returns the organization with credits as a decimal string", async () => {
    const org = await seedOrg({ creditsUsd: 42.5 });
    const res = await call("/v1/master/organization", { key: org.masterKey });
    expect(res.status).toBe(200);
    const body = (await res.json()) as OrgBody;
    expect(body.organization).toMatchObject({ id: org.orgId, credits: "42.5", notifications: { thresholdPercent: 80 } });
  });

  it("PATCH merges policy and reaches warm key contexts immediately", async () => {
    const org = await seedOrg();
    const warm = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(warm.organization.compliance).toEqual({});
    const res = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ compliance: { deniedProviders: ["openai", "openai"] }, notifications: { apiKeyBudgets: true, thresholdPercent: 90 } }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as OrgBody).organization).toMatchObject({ compliance: { deniedProviders: ["openai"] }, notifications: { apiKeyBudgets: true, thresholdPercent: 90 } });
    const second = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ compliance: { noTraining: true } }) });
    expect(((await second.json()) as OrgBody).organization.compliance).toEqual({ deniedProviders: ["openai"], noTraining: true });

    const fresh = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(fresh.organization.compliance).toEqual({ deniedProviders: ["openai"], noTraining: true });
    expect(fresh.organization.notifications).toEqual({ apiKeyBudgets: true, thresholdPercent: 90 });
  });

  it("validates with 400 + param", async () => {
    const org = await seedOrg();
    for (const [body, param] of [
      [{ compliance: { deniedProviders: ["nope"] } }, "compliance.deniedProviders.0"],
      [{ notifications: { thresholdPercent: 49 } }, "notifications.thresholdPercent"],
      [{ notifications: { thresholdPercent: 101 } }, "notifications.thresholdPercent"],
      [{ compliance: { noTraining: "yes" } }, "compliance.noTraining"],
    ] as const) {
      const res = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json(body) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    // A misspelt setting inside compliance or notifications (a residency list, an alert switch) is
    // named, not silently dropped with a 200 that changed nothing.
    for (const [body, param] of [
      [{ compliance: { regoins: ["EU"] } }, "compliance.regoins"],
      [{ notifications: { threshold: 60 } }, "notifications.threshold"],
      [{ compliance: { noTraining: true }, complience: {} }, "complience"],
    ] as const) {
      const res = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    // The dashboard's session API takes the same body and names the field the same way.
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const dash = await call("/api/organization", {
      method: "PATCH",
      headers: { cookie: s.cookie, "x-csrf-token": s.csrf, origin: "http://gw.test", "content-type": "application/json" },
      body: JSON.stringify({ compliance: { regoins: ["EU"] } }),
    });
    expect(dash.status).toBe(400);
    expect(((await dash.json()) as { error: { param: string } }).error.param).toBe("compliance.regoins");
    const empty = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({}) });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("nothing to update");
  });
});

/**
 * A key's own budget alert threshold (migration 0004): set from the dashboard session
 * API, it wins over the organization's threshold; cleared (null), the organization's applies again.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { admitKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { settleRequest } from "../../src/billing/settle";
import { signIn } from "./session";

const COST = 1_000_000n; // $0.000001


describe("per-key budget alert threshold", () => {
  it("the key's threshold wins over the organization's, and null returns to it", async () => {
    const org = await seedOrg();
    await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { apiKeyBudgets: true, thresholdPercent: 90 } }) });
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const headers = { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" };
    const created = await call("/api/keys", { method: "POST", headers, body: JSON.stringify({ projectId: org.projectId, description: "own threshold", usageLimit: "0.00001", alertThresholdPercent: 50 }) });
    expect(created.status).toBe(201);
    const { apiKey } = (await created.json()) as { apiKey: { id: string; token: string } };
    const ctx = await resolveGatewayKey(env, apiKey.token);
    const spend = async (n: bigint) => {
      const a = await admitKey(env, ctx, COST);
      await settleRequest(env, a.context, a.reservationId, { totalPico: n * COST, creditsPico: n * COST });
    };
    const alerts = async () => (await env.DB.prepare("SELECT message FROM notifications WHERE api_key_id = ?").bind(apiKey.id).all<{ message: string }>()).results;

    await spend(5n); // 50%: the key's threshold (the organization's is 90%)
    const first = await alerts();
    expect(first).toHaveLength(1);
    expect(first[0]!.message).toContain("alert threshold 50%");

    // Out of range is refused; null returns to the organization's threshold.
    const bad = await call(`/api/keys/${apiKey.id}`, { method: "PATCH", headers, body: JSON.stringify({ alertThresholdPercent: 20 }) });
    expect(bad.status).toBe(400);
    const cleared = await call(`/api/keys/${apiKey.id}`, { method: "PATCH", headers, body: JSON.stringify({ alertThresholdPercent: null }) });
    expect(cleared.status).toBe(200);
    const page = await (await call(`/dashboard/keys?project=${org.projectId}`, { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    expect(page).toContain('<td data-label="Alert at">90%</td>');
  });
});

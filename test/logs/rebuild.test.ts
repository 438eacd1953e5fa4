/** `POST /v1/admin/usage/rebuild?hour=`: a closed hour's aggregates recomputed from its records in R2. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, seedOrg, TEST_SECRETS } from "../helpers/fixtures";
import { applyRows } from "../helpers/logs";
import { newId } from "../../src/lib/ids";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";

// A closed hour within R2's retention (REQUEST_LOG_RETENTION_DAYS, 30).
const H = hourStartOf(Date.now()) - 3 * HOUR_MS;
const rebuild = (hour: string, token: string = TEST_SECRETS.ADMIN_TOKEN) => call(`/v1/admin/usage/rebuild?hour=${encodeURIComponent(hour)}`, { method: "POST", key: token });
const sums = async (projectId: string) =>
  env.DB.prepare("SELECT SUM(requests) AS n, CAST(SUM(cost_pico) AS TEXT) AS c FROM usage_hourly WHERE project_id = ? AND hour_start = ?").bind(projectId, H).first<{ n: number; c: string }>();

describe("POST /v1/admin/usage/rebuild", () => {
  it("replaces a closed hour's aggregates by the sums of its records; refuses open hours and bad input", async () => {
    const org = await seedOrg();
    await applyRows(
      Array.from({ length: 25 }, (_, i) => ({
        id: newId("log"), requestId: newId("req"), organizationId: org.orgId, projectId: org.projectId, apiKeyId: org.keyId,
        requestedModel: "gpt-4o-mini", usedProvider: "openai", statusCode: 200, costPico: 1_000_000 + i, createdAt: H + i * 60_000,
      })),
    );
    const expected = { n: 25, c: String(25 * 1_000_000 + (24 * 25) / 2) };
    expect(await sums(org.projectId)).toEqual(expected);
    // Aggregates damaged (a bug, a manual edit): the rebuild restores them from R2.
    await env.DB.prepare("UPDATE usage_hourly SET requests = 1, cost_pico = 1 WHERE project_id = ?").bind(org.projectId).run();
    const res = await rebuild(new Date(H + 30 * 60_000).toISOString());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ hour: new Date(H).toISOString(), records: 25 });
    expect(await sums(org.projectId)).toEqual(expected);

    const open = await rebuild(new Date(hourStartOf(Date.now())).toISOString());
    expect(open.status).toBe(400);
    expect(((await open.json()) as { error: { code: string } }).error.code).toBe("hour_not_closed");
    expect((await rebuild("noon")).status).toBe(400);
    // Past R2's retention the hour's records are deleted: a rebuild would wipe its aggregates.
    const expired = await rebuild(new Date(H - 40 * 24 * HOUR_MS).toISOString());
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe("hour_not_rebuildable");
    expect((await rebuild(new Date(H - HOUR_MS).toISOString(), "wrong")).status).toBe(401);
  });
});

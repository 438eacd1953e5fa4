/**
 * Billing never waits on the request window (docs/scale.md): with every insert into
 * `request_logs` refused, as a full database refuses it, the LOGS consumer still debits each
 * request once and counts it once, and the records are in R2, where the request log finds them.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { chat, setProject, user } from "../chat/helpers";
import { HOUR_MS, hourRecords, hourStartOf } from "../../src/usage/aggregate";
import { listRequests } from "../../src/usage/request-list";

const REFUSE = `CREATE TRIGGER IF NOT EXISTS refuse_window BEFORE INSERT ON request_logs BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`;

afterEach(async () => {
  await env.DB.prepare("DROP TRIGGER IF EXISTS refuse_window").run();
});

const credits = async (orgId: string) => BigInt((await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(orgId).first<{ c: string }>())!.c);
const counted = async (projectId: string) =>
  (await env.DB.prepare("SELECT COALESCE(SUM(requests), 0) AS n, CAST(COALESCE(SUM(credits_cost_pico), 0) AS TEXT) AS cr FROM usage_hourly WHERE project_id = ?").bind(projectId).first<{ n: number; cr: string }>())!;

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the window insert refused", () => {
  it("every request is debited once and aggregated once; its record is in R2", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    await setProject(org.projectId, { mode: "credits" });
    await env.DB.prepare(REFUSE).run();
    const before = await credits(org.orgId);
    const start = Date.now();
    for (let i = 0; i < 5; i++) {
      const res = await chat(org.key, { model: "gpt-4o-mini", messages: user(`refused window ${i}`), max_tokens: 16 });
      expect(res.status).toBe(200);
      await res.text();
    }
    await until(async () => (await counted(org.projectId)).n >= 5, "5 requests counted");
    // A redelivery (a consumer that threw) would come within a fifth of a second in tests: wait it out.
    await new Promise((r) => setTimeout(r, 1500));
    const agg = await counted(org.projectId);
    expect(agg.n).toBe(5);
    const hours = [...new Set([hourStartOf(start), hourStartOf(Date.now())])];
    const records = (await Promise.all(hours.map((h) => hourRecords(env.LOGS_BUCKET, org.orgId, h)))).flat();
    expect(records.length).toBe(5);
    const charged = records.reduce((s, r) => s + BigInt(r.creditsCostPico), 0n);
    expect(charged).toBeGreaterThan(0n);
    expect(BigInt(agg.cr)).toBe(charged);
    expect(before - (await credits(org.orgId))).toBe(charged);
    // The window holds none of them: the trigger refused every row.
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM request_logs WHERE organization_id = ?").bind(org.orgId).first<{ n: number }>();
    expect(rows!.n).toBe(0);
    // The request log still shows them: the window's start moved past the dropped rows, so the list reads R2.
    const now = Date.now();
    const page = await listRequests(env, { organizationId: org.orgId, projectId: org.projectId }, { from: now - HOUR_MS, to: now + 60_000 }, null, null, now);
    expect(page.rows.map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());
  });
});

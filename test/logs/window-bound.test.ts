/**
 * The request window bounded by rows per organization (REQUEST_LOG_WINDOW_ROWS, besides
 * REQUEST_LOG_WINDOW_HOURS): the cron's trim keeps each organization's newest rows, and the
 * request log (list with paging, a request's detail, the export) reads what the window no longer
 * holds from R2, so nothing a user can see is lost.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { incoming, sampleRows } from "../helpers/logs";
import { applyLogRecords } from "../../src/usage/log-consumer";
import { trimWindow, trimWindowRows } from "../../src/usage/retention";
import { copyOldRows } from "../../src/usage/upgrade";
import { findRequest, listRequests, type Cursor } from "../../src/usage/request-list";
import { recordsByHour } from "../../src/usage/log-export";
import { HOUR_MS } from "../../src/usage/aggregate";
import type { LogRecord } from "../../src/usage/log-record";
import type { Env } from "../../src/env";

const withRows = (rows: string): Env => Object.create(env, { REQUEST_LOG_WINDOW_ROWS: { value: rows } }) as Env;

const windowIds = async (orgId: string): Promise<string[]> =>
  (await env.DB.prepare("SELECT id FROM request_logs WHERE organization_id = ? ORDER BY created_at DESC, id DESC").bind(orgId).all<{ id: string }>()).results.map((r) => r.id);

/** `n` records of the organization in the last hour, applied by the consumer; newest first. */
async function traffic(e: Env, org: SeededOrg, n: number, now: number): Promise<LogRecord[]> {
  const records = sampleRows(org, [org.keyId], n, now - 50 * 60_000, 40 * 60_000).map((r) => incoming(r));
  expect(await applyLogRecords(e, records, now)).toBe(n);
  return records.map((r) => r.record).sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
}

describe("the window bounded by rows per organization", () => {
  it("the trim keeps each organization's newest REQUEST_LOG_WINDOW_ROWS rows", async () => {
    const e = withRows("10");
    const now = Date.now();
    // The upgrade's copy step has run (a deployment past it): the trim may delete rows.
    await copyOldRows(e, now - 2 * HOUR_MS);
    const busy = await seedOrg();
    const quiet = await seedOrg();
    const sent = await traffic(e, busy, 25, now);
    await traffic(e, quiet, 5, now);
    expect((await windowIds(busy.orgId)).length).toBe(25);

    const run = await trimWindow(e, now);
    expect(run.deletedOverRows).toBe(15);
    expect(await windowIds(busy.orgId)).toEqual(sent.slice(0, 10).map((r) => r.id));
    expect((await windowIds(quiet.orgId)).length).toBe(5);
    // A second run finds nothing more to delete.
    expect((await trimWindow(e, now + 60_000)).deletedOverRows).toBe(0);
  });

  it("every organization gets its turn: a run that reaches only some leaves the others first in line", async () => {
    const e = withRows("10");
    const now = Date.now();
    await copyOldRows(e, now - 2 * HOUR_MS);
    await trimWindowRows(e, now); // the organizations of earlier tests are checked
    const [a, b] = [await seedOrg(), await seedOrg()];
    await traffic(e, a, 15, now);
    await traffic(e, b, 15, now);
    // One organization a run: the first run trims one of them, the next the other.
    expect(await trimWindowRows(e, now + 60_000, 1)).toBe(5);
    expect(await trimWindowRows(e, now + 120_000, 1)).toBe(5);
    expect([(await windowIds(a.orgId)).length, (await windowIds(b.orgId)).length]).toEqual([10, 10]);
  });

  it("the request log pages past the window into R2: every request listed once, details and export too", async () => {
    const e = withRows("10");
    const now = Date.now();
    await copyOldRows(e, now - 2 * HOUR_MS);
    const org = await seedOrg();
    const sent = await traffic(e, org, 120, now);
    await trimWindow(e, now);
    expect((await windowIds(org.orgId)).length).toBe(10);

    const scope = { organizationId: org.orgId, projectId: org.projectId };
    const period = { from: now - 2 * HOUR_MS, to: now + 60_000 };
    const listed: string[] = [];
    let cursor: Cursor | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page = await listRequests(e, scope, period, cursor, null, now);
      listed.push(...page.rows.map((r) => r.id));
      cursor = page.next;
      if (!cursor) break;
    }
    expect(listed).toEqual(sent.map((r) => r.id));

    // The detail of a request only R2 holds, by its time as the list links it.
    const oldest = sent[sent.length - 1]!;
    expect((await findRequest(e, scope, oldest.id, oldest.createdAt))?.id).toBe(oldest.id);
    // The export reads the same, hour by hour.
    const exported: string[] = [];
    for await (const hour of recordsByHour(e, { organizationId: org.orgId }, period.from, period.to, now)) exported.push(...hour.map((r) => r.id));
    expect(exported.sort()).toEqual(sent.map((r) => r.id).sort());
    // And GET /v1/master/logs, through the gateway.
    const res = await call(`/v1/master/logs?from=${new Date(period.from).toISOString()}&to=${new Date(period.to).toISOString()}`, { key: org.masterKey });
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split("\n").map((l) => (JSON.parse(l) as { id: string }).id);
    expect(lines.sort()).toEqual(sent.map((r) => r.id).sort());
  });
});

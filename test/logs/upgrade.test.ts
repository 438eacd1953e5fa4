/**
 * The upgrade from the path before the LOGS queue (src/usage/upgrade.ts): rows the old outboxes
 * inserted into `request_logs` after the old cron's last run are aggregated once, rows it had
 * aggregated are not counted again, and records the queue brings to the same hours are kept.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows } from "../helpers/logs";
import { insertOldWay, oldCron } from "../helpers/old-path";
import { applyLogRecords } from "../../src/usage/log-consumer";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import { aggregateUsageJob, CATCH_UP_COPIED_ID } from "../../src/usage/upgrade";
import { trimWindow } from "../../src/usage/retention";
import type { Env } from "../../src/env";

const count = async () => (await env.DB.prepare("SELECT COUNT(*) AS n FROM request_logs").first<{ n: number }>())!.n;

describe("upgrade from the path before the queue", () => {
  it("aggregates the old rows the old cron had not seen, once, with the queue's records of the same hours", async () => {
    const now = Date.now();
    const H = hourStartOf(now);
    const org = await seedOrg();
    const keys = [org.keyId, "key_up_b", "key_up_c"];
    // Old rows over the four hours before the upgrade (all answered: the old labels equal the new).
    const old = sampleRows(org, keys, 400, H - 3 * HOUR_MS, 3 * HOUR_MS + (now - H) - 1000)
      .map((r) => ({ ...r, usedProvider: r.usedProvider ?? "openai", usedModel: r.usedModel ?? r.requestedModel, statusCode: 200 }))
      .map((r) => incoming(r));
    // The old cron's last run saw the first 300 rows: H-3h is final, the hours after are not.
    await insertOldWay(old.slice(0, 300));
    await oldCron(H - 3 * HOUR_MS, H + HOUR_MS, H - 2 * HOUR_MS, now - 60_000);
    // The last minute before the upgrade: the old outboxes inserted 100 more rows.
    await insertOldWay(old.slice(300));
    // After the upgrade the queue brings records to the same hours; one of them an old row an old
    // outbox sends again (it crashed between its insert and its delete).
    const fresh = sampleRows(org, keys, 200, H - HOUR_MS, now - (H - HOUR_MS) - 1000).map((r) => incoming(r));
    await applyLogRecords(env, fresh, now);

    // Before the copy step the window trim leaves the old rows (even with the window off).
    const windowOff = Object.create(env, { REQUEST_LOG_WINDOW_HOURS: { value: "0" } }) as Env;
    const rows = await count();
    await trimWindow(windowOff, now);
    expect(await count()).toBe(rows);

    await aggregateUsageJob(env, now);
    expect(await env.DB.prepare("SELECT id FROM aggregation_state WHERE id = ?").bind(CATCH_UP_COPIED_ID).first()).not.toBeNull();
    // The replayed old row is skipped now.
    expect(await applyLogRecords(env, [old[350]!], now)).toBe(0);
    // The hours close; the catch-up rebuilds them from R2.
    const later = H + 2 * HOUR_MS + 20 * 60_000;
    await aggregateUsageJob(env, later);
    const expected = directSum([...old, ...fresh].map((r) => r.record));
    expect(await aggregates(org.projectId)).toEqual(expected);
    // Again: nothing changes.
    await aggregateUsageJob(env, later + 60_000);
    await aggregateUsageJob(env, later + 3 * HOUR_MS);
    expect(await aggregates(org.projectId)).toEqual(expected);
    // The window trim runs now; rows created before the copy step (the old path's, and here the
    // queue's too) stay until the dedup horizon passes them: an old outbox's replay is recognised
    // by its row.
    await trimWindow(windowOff, later);
    expect(await count()).toBe(old.length + fresh.length);
    await trimWindow(windowOff, later + 26 * HOUR_MS);
    expect(await count()).toBe(0);
  }, 60_000);
});

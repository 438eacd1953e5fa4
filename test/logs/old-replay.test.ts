/**
 * An old outbox's replay after the upgrade (docs/scale.md, "Upgrading"): before the queue, a key's
 * outbox inserted its row into `request_logs` and debited the credits in one D1 batch, then
 * deleted it from the outbox; one that crashed in between sends the same row again after the
 * deploy, through the queue. It is applied already: debited once, aggregated once. A video job's
 * row, which the gateway inserts before its record arrives through the queue, is still applied.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows } from "../helpers/logs";
import { insertOldWay, oldCron } from "../helpers/old-path";
import { applyLogRecords } from "../../src/usage/log-consumer";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import { aggregateUsageJob } from "../../src/usage/upgrade";
import { trimWindow } from "../../src/usage/retention";
import { LOG_COLUMNS } from "../../src/usage/request-log";
import type { Env } from "../../src/env";

describe("an old outbox replaying a row after the upgrade", () => {
  it("is debited and aggregated once, before and after the copy step, with the window off; a video job's record is applied once", async () => {
    const now = Date.now();
    const H = hourStartOf(now);
    const U = H - HOUR_MS; // where the old cron stopped
    const org = await seedOrg({ creditsUsd: 1 });
    const balance = async () => BigInt((await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(org.orgId).first<{ c: string }>())!.c);
    const start = await balance();
    const answered = (r: ReturnType<typeof sampleRows>[number]) => ({ ...r, usedProvider: r.usedProvider ?? "openai", usedModel: r.usedModel ?? r.requestedModel, statusCode: 200 });
    // Old rows: one in a final hour (before U), one after U, one never replayed; each debited.
    const [r1, r2, r0] = [U - 30 * 60_000, U + 10 * 60_000, U - 20 * 60_000].map((t, i) => incoming(answered(sampleRows(org, [org.keyId], 1, t, 1)[0]!), String((i + 1) * 1_000_000)));
    await insertOldWay([r0!, r1!, r2!]);
    await oldCron(U - 2 * HOUR_MS, H + HOUR_MS, U, now - 60_000);
    expect(start - (await balance())).toBe(6_000_000n);

    // Deployed. A video job created before the first cron run: its row is inserted at once, its
    // record follows through the queue.
    const video = incoming({ ...answered(sampleRows(org, [org.keyId], 1, now - 10_000, 1)[0]!), kind: "video", costPico: 7, creditsCostPico: 7 });
    await env.DB.prepare(`INSERT INTO request_logs (${LOG_COLUMNS.join(", ")}) SELECT ${LOG_COLUMNS.map((_, i) => `json_extract(?1, '$[${i}]')`).join(", ")}`).bind(video.row).run();
    // The old outboxes send their rows again, before the upgrade's copy step.
    expect(await applyLogRecords(env, [r1!, r2!, video], now)).toBe(1);
    expect(start - (await balance())).toBe(6_000_000n);

    await aggregateUsageJob(env, now + 30_000);
    // After the copy step, and after the window trim (window off): still skipped.
    const windowOff = Object.create(env, { REQUEST_LOG_WINDOW_HOURS: { value: "0" } }) as Env;
    await trimWindow(windowOff, now + 60_000);
    expect(await applyLogRecords(env, [r1!, r2!, video], now + 90_000)).toBe(0);
    expect(start - (await balance())).toBe(6_000_000n);

    // The hours close and the catch-up rebuilds those from U on; the hour before U stays final.
    await aggregateUsageJob(env, H + 2 * HOUR_MS + 20 * 60_000);
    expect(await aggregates(org.projectId)).toEqual(directSum([r0!, r1!, r2!, video].map((r) => r.record)));
  }, 60_000);
});

/**
 * The hours before the upgrade from the path before the LOGS queue (docs/scale.md, "Upgrading"):
 * their aggregates came from `request_logs` rows that were never copied to R2, so a rebuild from R2
 * would wipe them. The admin rebuild refuses them, naming the first hour it can rebuild, and a late
 * record of such an hour is added to its aggregates (once) instead of rebuilding it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, seedOrg, TEST_SECRETS } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows } from "../helpers/logs";
import { insertOldWay, oldCron } from "../helpers/old-path";
import { applyLogRecords } from "../../src/usage/log-consumer";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import { aggregateUsageJob } from "../../src/usage/upgrade";

const rebuild = (hour: number) => call(`/v1/admin/usage/rebuild?hour=${encodeURIComponent(new Date(hour).toISOString())}`, { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

describe("hours before the upgrade", () => {
  it("are never rebuilt from R2: the admin rebuild refuses them, a late record is added to them once", async () => {
    const now = Date.now();
    const H = hourStartOf(now);
    const U = H - 2 * HOUR_MS; // where the old cron stopped: hours before it are final
    const O = H - 30 * HOUR_MS; // an old hour, before the dedup horizon (24 h)
    const org = await seedOrg();
    const keys = [org.keyId, "key_bd_b"];
    const answered = (r: ReturnType<typeof sampleRows>[number]) => ({ ...r, usedProvider: r.usedProvider ?? "openai", usedModel: r.usedModel ?? r.requestedModel, statusCode: 200 });
    const old = sampleRows(org, keys, 40, O, 2 * HOUR_MS - 1000).map(answered).map((r) => incoming(r));
    await insertOldWay(old);
    await oldCron(O, H + HOUR_MS, U, now - 60_000);
    const before = await aggregates(org.projectId);
    expect(before).toEqual(directSum(old.map((r) => r.record)));

    // Deployed, the copy step not run yet: no hour is rebuildable.
    const pending = await rebuild(U);
    expect(pending.status).toBe(400);
    expect((await errorOf(pending)).code).toBe("hour_not_rebuildable");

    await aggregateUsageJob(env, now);
    // An hour before U: refused, naming U; its aggregates untouched.
    const refused = await rebuild(O + 30 * 60_000);
    expect(refused.status).toBe(400);
    const err = await errorOf(refused);
    expect(err.code).toBe("hour_not_rebuildable");
    expect(err.message).toContain(new Date(U).toISOString());
    expect(await aggregates(org.projectId)).toEqual(before);
    // U itself (closed, every record in R2) is rebuilt.
    expect((await rebuild(U)).status).toBe(200);

    // A dead-letter replay of a record of hour O (never applied): added, not a rebuild of O from R2
    // (which holds only this record).
    const [lateRow] = sampleRows(org, keys, 1, O + 10 * 60_000, 1).map(answered);
    const late = incoming(lateRow!);
    expect(await applyLogRecords(env, [late], now)).toBe(1);
    const expected = directSum([...old, late].map((r) => r.record));
    expect(await aggregates(org.projectId)).toEqual(expected);
    // Delivered again: deduplicated as usual.
    expect(await applyLogRecords(env, [late], now + 60_000)).toBe(0);
    expect(await aggregates(org.projectId)).toEqual(expected);
  }, 60_000);
});

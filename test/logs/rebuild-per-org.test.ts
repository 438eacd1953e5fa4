/**
 * Rebuilds per organization (docs/scale.md, "Rebuilds are exact"): when only one organization's
 * records of an hour arrive late, the rebuild reads only that organization's R2 objects and
 * replaces only its aggregates; a whole-hour rebuild that read R2 before them cannot commit.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows } from "../helpers/logs";
import { applyLogRecords, storeLogRecords } from "../../src/usage/log-consumer";
import { commitHour, HOUR_MS, hourStartOf, markStatement, newMarkToken, readHour } from "../../src/usage/aggregate";
import { trimWindow } from "../../src/usage/retention";
import type { Env } from "../../src/env";

const now = Date.now();
/** Before the dedup horizon (24 h), within R2's retention (30 days). */
const lateHour = (n: number) => hourStartOf(now) - n * HOUR_MS;

/** An Env whose R2 bucket records the prefixes listed and the keys read. */
function watchedBucket(): { env: Env; touched: string[] } {
  const touched: string[] = [];
  const bucket = new Proxy(env.LOGS_BUCKET, {
    get(target, prop) {
      if (prop === "list") return (o?: R2ListOptions) => (touched.push(`list ${o?.prefix ?? ""}`), target.list(o));
      if (prop === "get") return (key: string) => (touched.push(`get ${key}`), target.get(key));
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { env: Object.create(env, { LOGS_BUCKET: { value: bucket } }) as Env, touched };
}

describe("a late record of one organization", () => {
  it("its hour's rebuild reads only that organization's objects; every organization's aggregates stay exact", async () => {
    const L = lateHour(40);
    const [a, b] = [await seedOrg(), await seedOrg()];
    const rowsA = sampleRows(a, [a.keyId], 20, L, 50 * 60_000).map((r) => incoming(r));
    const rowsB = sampleRows(b, [b.keyId], 20, L, 50 * 60_000).map((r) => incoming(r));
    // Applied in time (the hour's aggregates added to), then their ids forgotten.
    await applyLogRecords(env, [...rowsA.slice(0, 15), ...rowsB], L + 55 * 60_000);
    await trimWindow(env, now);
    const watched = watchedBucket();
    // Organization A's last five records come through a dead-letter replay.
    expect(await applyLogRecords(watched.env, rowsA.slice(15), now)).toBe(5);
    expect(watched.touched.length).toBeGreaterThan(0);
    expect(watched.touched.filter((t) => !t.includes(`logs/${a.orgId}/`))).toEqual([]);
    expect(await aggregates(a.projectId)).toEqual(directSum(rowsA.map((r) => r.record)));
    expect(await aggregates(b.projectId)).toEqual(directSum(rowsB.map((r) => r.record)));
  });

  it("a whole-hour rebuild that read R2 before an organization's late records is refused; read again it holds them", async () => {
    const L = lateHour(41);
    const org = await seedOrg();
    const list = sampleRows(org, [org.keyId], 10, L, 50 * 60_000).map((r) => incoming(r));
    await storeLogRecords(env, list.slice(0, 5), now);
    // The operator's rebuild of the hour (every organization) reads R2 ...
    await markStatement(env.DB, [L], newMarkToken()).run();
    const whole = await readHour(env, L);
    expect(whole.records).toBe(5);
    // ... the next five arrive late and rebuild the organization's part ...
    expect((await applyLogRecords(env, list.slice(5), now))).toBe(5);
    // ... and the whole-hour commit, stale, is refused.
    expect(await commitHour(env, whole, now)).toBe(false);
    const again = await readHour(env, L);
    expect(again.records).toBe(10);
    expect(await commitHour(env, again, now)).toBe(true);
    expect(await aggregates(org.projectId)).toEqual(directSum(list.map((r) => r.record)));
  });
});

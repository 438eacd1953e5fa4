/**
 * Two late batches of the same hour at the same moment (docs/scale.md, "Rebuilds are exact"): each
 * writes R2 and marks the hour in its D1 batch; a rebuild commits only while the mark holds the
 * token it read before reading R2. The interleavings are driven step by step.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows } from "../helpers/logs";
import { storeLogRecords } from "../../src/usage/log-consumer";
import { commitHour, HOUR_MS, hourStartOf, readHour, rebuildMarkedHour } from "../../src/usage/aggregate";
import { aggregateUsageJob } from "../../src/usage/upgrade";

const now = Date.now();
/** Before the dedup horizon (24 h), within R2's retention (30 days). */
const lateHour = (n: number) => hourStartOf(now) - n * HOUR_MS;
const marks = async () => (await env.DB.prepare("SELECT COUNT(*) AS n FROM aggregation_state WHERE id LIKE 'rebuild:%'").first<{ n: number }>())!.n;

async function twoLateBatches(hour: number) {
  const org = await seedOrg();
  const [a, b] = [0, 1].map((i) => sampleRows(org, [org.keyId, "key_race_b"], 5, hour + i * 20 * 60_000, 10 * 60_000).map((r) => incoming(r)));
  return { org, a: a!, b: b! };
}

describe("two late batches of one hour", () => {
  it("A reads R2, B stores, reads and commits, A commits: A's stale commit is refused, the hour holds both", async () => {
    const L = lateHour(30);
    const { org, a, b } = await twoLateBatches(L);
    expect(await storeLogRecords(env, a, now)).toEqual({ fresh: 5, rebuilds: [{ hour: L, organizationId: org.orgId }] });
    const readA = await readHour(env, L, false, org.orgId);
    expect(readA.records).toBe(5);
    await storeLogRecords(env, b, now);
    const readB = await readHour(env, L, false, org.orgId);
    expect(readB.records).toBe(10);
    const committed = [await commitHour(env, readB, now), await commitHour(env, readA, now)];
    const expected = directSum([...a, ...b].map((r) => r.record));
    expect(await aggregates(org.projectId)).toEqual(expected);
    expect(committed).toEqual([true, false]);
    // A's consumer goes on: the mark is gone, nothing to do.
    expect(await rebuildMarkedHour(env, L, now, org.orgId)).toBeNull();
    expect(await aggregates(org.projectId)).toEqual(expected);
    expect(await marks()).toBe(0);
  });

  it("A reads R2, B stores, A commits: refused (the mark changed); A reads again and the hour holds both", async () => {
    const L = lateHour(31);
    const { org, a, b } = await twoLateBatches(L);
    await storeLogRecords(env, a, now);
    const readA = await readHour(env, L, false, org.orgId);
    await storeLogRecords(env, b, now);
    expect(await commitHour(env, readA, now)).toBe(false);
    expect((await rebuildMarkedHour(env, L, now, org.orgId))?.records).toBe(10);
    expect(await aggregates(org.projectId)).toEqual(directSum([...a, ...b].map((r) => r.record)));
    expect(await marks()).toBe(0);
  });

  it("a consumer that stopped after its D1 batch leaves the hour marked: the cron rebuilds it", async () => {
    const L = lateHour(32);
    const { org, a } = await twoLateBatches(L);
    await storeLogRecords(env, a, now);
    expect(await aggregates(org.projectId)).toEqual([]);
    await aggregateUsageJob(env, now);
    expect(await aggregates(org.projectId)).toEqual(directSum(a.map((r) => r.record)));
    expect(await marks()).toBe(0);
  });
});

/**
 * A group's bodies are written as several parts (queue messages) and objects (one per
 * organization and hour of a message): one can be lost while the others are stored. Each request
 * then reads as what happened to its own bodies, and the Requests page's kept-bodies filter agrees
 * with `bodiesStatus`: stored ones are kept, the lost ones dropped; so it does past the settle
 * window for bodies lost without a mark, and for bodies stored despite a mark.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { applyRows } from "../helpers/logs";
import { groupMessages, queueBodies } from "../../src/usage/body-batch";
import { consumeLogBatch, LOGS_MAX_RETRIES } from "../../src/usage/log-consumer";
import { BODIES_SETTLED_MS, type BodyMessage } from "../../src/usage/bodies";
import type { KeyContext } from "../../src/context/key-context";
import type { Env } from "../../src/env";
import { newId } from "../../src/lib/ids";
import { signIn } from "../dashboard/session";

type Json = Record<string, any>;
type Capture = { auth: KeyContext; logId: string; requestId: string; createdAt: number; request: unknown; response: unknown };

const authOf = (o: SeededOrg) => ({ organization: { id: o.orgId, compliance: {} }, project: { id: o.projectId, logBodies: true }, key: { id: o.keyId } }) as unknown as KeyContext;
/** Bodies at the cap on both sides: one request per part (two do not fit one queue message). */
const large = (o: SeededOrg, createdAt: number): Capture => ({ auth: authOf(o), logId: newId("log"), requestId: newId("req"), createdAt, request: { q: "x".repeat(40_000) }, response: { a: "y".repeat(40_000) } });
const small = (o: SeededOrg, createdAt: number): Capture => ({ ...large(o, createdAt), request: { q: 1 }, response: { a: 1 } });

/** An R2 bucket refusing the writes of keys `refuse` matches (the rest go through). */
function refusingBucket(refuse: (key: string) => boolean): R2Bucket {
  return new Proxy(env.LOGS_BUCKET, {
    get(target, prop) {
      if (prop === "put") return (...args: Parameters<R2Bucket["put"]>) => (refuse(args[0]) ? Promise.reject(new Error("R2 down")) : target.put(...args));
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const utcDay = (t: number): string => new Date(t).toISOString().slice(0, 10);

/** Messages delivered to the consumer as one batch, for the `attempts`th time. */
async function deliver(bodies: readonly BodyMessage[], attempts: number, bucket: R2Bucket = env.LOGS_BUCKET): Promise<void> {
  const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body, ack: () => undefined, retry: () => undefined }));
  const batch = { queue: "switchboard-logs", messages, ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>;
  await consumeLogBatch(batch, Object.create(env, { LOGS_BUCKET: { value: bucket } }) as Env);
}

/** The requests' records, naming their group and their place in it (the order they joined), as the gateway sends them. */
async function applyRecords(o: SeededOrg, group: string, captures: readonly Capture[]): Promise<void> {
  await applyRows(captures.map((c, i) => ({ id: c.logId, requestId: c.requestId, organizationId: o.orgId, projectId: o.projectId, apiKeyId: o.keyId, requestedModel: "gpt-4o-mini", statusCode: 200, createdAt: c.createdAt, extra: { bodies: true, bodyBatch: group, bodyIndex: i } })));
}

/** Each request's `bodiesStatus`, and the log ids the Requests page lists as kept and as not kept. */
async function verdicts(o: SeededOrg, captures: readonly Capture[], period = ""): Promise<{ status: string[]; kept: string[]; notKept: string[] }> {
  const status: string[] = [];
  for (const c of captures) status.push(((await (await call(`/v1/master/logs/${c.requestId}?at=${c.createdAt}`, { key: o.masterKey })).json()) as Json).bodiesStatus as string);
  const owner = await signIn(o.ownerEmail, o.ownerPassword);
  const list = async (q: string) => {
    const page = await (await call(`/dashboard/requests?project=${o.projectId}${period}&${q}`, { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    return [...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]!).sort();
  };
  return { status, kept: await list("body=yes"), notKept: await list("body=no") };
}

describe("drop marks per request, not per group", () => {
  for (const [where, at, period] of [
    ["in the window", () => Date.now(), ""],
    ["in the archive", () => Date.UTC(2026, 2, 11, 9, 30, 0), "&from=2026-03-11&to=2026-03-11"],
  ] as const) {
    it(`a part lost on its last delivery drops its requests only; the group's stored part stays kept (${where})`, async () => {
      const o = await seedOrg();
      const createdAt = at();
      const group = { id: newId("bb"), items: [large(o, createdAt), large(o, createdAt + 1)] };
      const parts = groupMessages(group).map((m) => m.body);
      expect(parts.map((p) => [p.part, p.bodies.map((b) => b.logId)])).toEqual([[0, [group.items[0]!.logId]], [1, [group.items[1]!.logId]]]);
      // Part 0 is stored; part 1's object is refused on every delivery up to the last.
      const refusePart1 = refusingBucket((key) => key.endsWith(`${group.id}.1.json.gz`));
      await expect(deliver(parts, LOGS_MAX_RETRIES + 1, refusePart1)).rejects.toThrow(/R2 down/);
      await applyRecords(o, group.id, group.items);

      const [stored, lost] = group.items.map((c) => c.logId) as [string, string];
      expect(await verdicts(o, group.items, period)).toEqual({ status: ["stored", "dropped"], kept: [stored], notKept: [lost] });
    });
  }

  it("a part still on its retries stays pending (and kept) while another part of its group was dropped", async () => {
    const o = await seedOrg();
    const createdAt = Date.now();
    const group = { id: newId("bb"), items: [large(o, createdAt), large(o, createdAt + 1)] };
    const [part0, part1] = groupMessages(group).map((m) => m.body) as [BodyMessage, BodyMessage];
    const refuseAll = refusingBucket((key) => key.endsWith(".json.gz"));
    // Part 1 fails its last delivery; part 0 fails an earlier one: the queue will deliver it again.
    await expect(deliver([part1], LOGS_MAX_RETRIES + 1, refuseAll)).rejects.toThrow(/R2 down/);
    await expect(deliver([part0], 2, refuseAll)).rejects.toThrow(/R2 down/);
    await applyRecords(o, group.id, group.items);
    const [waiting, lost] = group.items.map((c) => c.logId) as [string, string];
    expect(await verdicts(o, group.items)).toEqual({ status: ["pending", "dropped"], kept: [waiting], notKept: [lost] });
    // Its next delivery stores it.
    await deliver([part0], 3);
    expect(await verdicts(o, group.items)).toEqual({ status: ["stored", "dropped"], kept: [waiting], notKept: [lost] });
  });

  it("a message whose object of one hour is lost on its last delivery drops only that hour's requests", async () => {
    const o = await seedOrg();
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    // One message of one group, holding a request of each hour: two objects.
    const group = { id: newId("bb"), items: [small(o, hour - 1_000), small(o, hour + 1_000)] };
    const parts = groupMessages(group).map((m) => m.body);
    expect(parts).toHaveLength(1);
    const hourDir = new Date(hour).toISOString().slice(11, 13);
    const refuseNewHour = refusingBucket((key) => key.endsWith(`/${hourDir}/${group.id}.0.json.gz`));
    await expect(deliver(parts, LOGS_MAX_RETRIES + 1, refuseNewHour)).rejects.toThrow(/R2 down/);
    await applyRecords(o, group.id, group.items);

    const [stored, lost] = group.items.map((c) => c.logId) as [string, string];
    const period = `&from=${utcDay(hour - 3_600_000)}&to=${utcDay(hour + 3_600_000)}`;
    expect(await verdicts(o, group.items, period)).toEqual({ status: ["stored", "dropped"], kept: [stored], notKept: [lost] });
  });

  it("a group the queue refused after some of its parts were sent drops only the unsent parts' requests", async () => {
    const o = await seedOrg();
    const createdAt = Date.now();
    // Four parts: the first send takes three (the send's byte limit), the next send is refused.
    const sent: BodyMessage[] = [];
    let sends = 0;
    const queue = {
      send: () => Promise.reject(new Error("queue down")),
      sendBatch: (batch: ReadonlyArray<{ body: BodyMessage }>) => {
        if (sends++ > 0) return Promise.reject(new Error("queue down"));
        sent.push(...batch.map((m) => m.body));
        return Promise.resolve();
      },
    };
    const captures = [0, 1, 2, 3].map((i) => large(o, createdAt + i));
    const waits: Array<Promise<unknown>> = [];
    let group: string | null = null;
    for (const c of captures) group = queueBodies({ ...env, LOGS: queue } as unknown as Env, (p) => waits.push(p), c)!.group;
    await Promise.all(waits);
    expect(sent.map((m) => m.part)).toEqual([0, 1, 2]);
    // The parts that were sent arrive and are stored.
    await deliver(sent, 1);
    await applyRecords(o, group!, captures);

    const ids = captures.map((c) => c.logId);
    expect(await verdicts(o, captures)).toEqual({ status: ["stored", "stored", "stored", "dropped"], kept: ids.slice(0, 3).sort(), notKept: [ids[3]!] });
  });
});

describe("the kept-bodies filter says what bodiesStatus says, marks or not", () => {
  for (const [where, at, period] of [
    // The page takes whole UTC days (YYYY-MM-DD; anything else falls back to yesterday and today,
    // which miss a day-old record in the first hour after midnight).
    ["in the window", () => Date.now() - BODIES_SETTLED_MS - 3_600_000, (t: number) => `&from=${utcDay(t - 3_600_000)}&to=${utcDay(t + 3_600_000)}`],
    ["in the archive", () => Date.UTC(2026, 2, 12, 9, 30, 0), () => "&from=2026-03-12&to=2026-03-12"],
  ] as const) {
    it(`past the settle window, bodies that never came and were never marked are not kept (${where})`, async () => {
      const o = await seedOrg();
      const createdAt = at();
      // Two parts: the isolate stored part 0 and died before sending part 1 (no send failed, no mark).
      const group = { id: newId("bb"), items: [large(o, createdAt), large(o, createdAt + 1)] };
      const [part0] = groupMessages(group).map((m) => m.body) as [BodyMessage, BodyMessage];
      await deliver([part0], 1);
      await applyRecords(o, group.id, group.items);
      const marks = await env.DB.prepare("SELECT COUNT(*) AS n FROM dropped_bodies WHERE organization_id = ?1").bind(o.orgId).first<{ n: number }>();
      expect(marks?.n).toBe(0);

      const [stored, never] = group.items.map((c) => c.logId) as [string, string];
      expect(await verdicts(o, group.items, period(createdAt))).toEqual({ status: ["stored", "dropped"], kept: [stored], notKept: [never] });
    });
  }

  it("bodies the queue took although its sendBatch threw are stored and kept, over the drop mark the producer wrote", async () => {
    const o = await seedOrg();
    const createdAt = Date.now();
    // The queue accepts every call and the call still throws (a timeout after acceptance): the
    // producer retries, gives up and marks the requests dropped; the consumer stores them anyway.
    const sent: BodyMessage[] = [];
    const queue = {
      send: () => Promise.reject(new Error("queue down")),
      sendBatch: async (batch: ReadonlyArray<{ body: BodyMessage }>) => {
        await env.LOGS.sendBatch(batch);
        sent.push(...batch.map((m) => m.body));
        throw new Error("sendBatch timed out after the queue accepted it");
      },
    };
    const captures = [small(o, createdAt), small(o, createdAt + 1)];
    const waits: Array<Promise<unknown>> = [];
    for (const c of captures) queueBodies({ ...env, LOGS: queue } as unknown as Env, (p) => waits.push(p), c);
    await Promise.all(waits);
    expect(sent.length).toBeGreaterThan(0);
    const group = sent[0]!.batch;
    await applyRecords(o, group, captures);
    const marks = await env.DB.prepare("SELECT COUNT(*) AS n FROM dropped_bodies WHERE organization_id = ?1").bind(o.orgId).first<{ n: number }>();
    expect(marks?.n).toBe(2);

    // The real consumer stores what the queue took (every attempt's copy, into the same object).
    const ids = captures.map((c) => c.logId).sort();
    let seen = await verdicts(o, captures);
    for (const deadline = Date.now() + 10_000; seen.status.some((s) => s !== "stored") && Date.now() < deadline; seen = await verdicts(o, captures)) await new Promise((ok) => setTimeout(ok, 100));
    expect(seen).toEqual({ status: ["stored", "stored"], kept: ids, notKept: [] });
  });
});

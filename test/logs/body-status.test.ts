/**
 * What a request's record says about its bodies: the group they were stored with stays internal
 * (exports and the request API never show `extra.bodyBatch`), and a group whose queue send failed
 * reads as dropped, not as "not stored yet" forever, and the Requests page's "kept" filter agrees;
 * so does a group the consumer could not store on the queue's last delivery (marks per request:
 * test/logs/body-drop-parts.test.ts), and a group's mark from before marks were per request.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, seedOrg } from "../helpers/fixtures";
import { chat, setProject, user, waitForLog } from "../chat/helpers";
import { applyRows } from "../helpers/logs";
import { groupMessages, queueBodies } from "../../src/usage/body-batch";
import { consumeLogBatch, LOGS_MAX_RETRIES } from "../../src/usage/log-consumer";
import { BODIES_SETTLED_MS, bodyDayPrefix } from "../../src/usage/bodies";
import type { KeyContext } from "../../src/context/key-context";
import type { Env } from "../../src/env";
import { newId } from "../../src/lib/ids";
import { signIn } from "../dashboard/session";

type Json = Record<string, any>;

describe("bodies in a request's record", () => {
  it("keeps the group of its bodies out of exports and the request API", async () => {
    const o = await seedOrg();
    await setProject(o.projectId, { logBodies: true });
    const res = await chat(o.key, { model: "gpt-4o-mini", messages: user("which group?") });
    const requestId = res.headers.get("x-request-id")!;
    const row = await waitForLog(requestId);
    // The record does name its group and its place there (readers find the bodies by them) ...
    expect(typeof (row.extra as Json).bodyBatch).toBe("string");
    expect((row.extra as Json).bodyIndex).toBe(0);
    const deadline = Date.now() + 8000;
    let one: Json;
    do {
      one = (await (await call(`/v1/master/logs/${requestId}`, { key: o.masterKey })).json()) as Json;
      if (!("responseBody" in one)) await new Promise((ok) => setTimeout(ok, 50));
    } while (!("responseBody" in one) && Date.now() < deadline);
    // ... which no reader outside sees.
    expect(one.requestBody.messages[0].content).toBe("which group?");
    expect(one.extra.bodies).toBe(true);
    expect("bodyBatch" in one.extra || "bodyIndex" in one.extra).toBe(false);
    expect(one.bodiesStatus).toBe("stored");
    const period = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const ndjson = await (await call(`/v1/master/logs?${period}`, { key: o.masterKey })).text();
    const line = ndjson.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Json).find((r) => r.requestId === requestId);
    expect(line?.extra.bodies).toBe(true);
    expect(ndjson).not.toMatch(/bodyBatch|bodyIndex/);
    const csv = await (await call(`/v1/master/logs?${period}`, { key: o.masterKey, headers: { accept: "text/csv" } })).text();
    expect(csv).toContain(requestId);
    expect(csv).not.toMatch(/bodyBatch|bodyIndex/);
  });

  it("says a group the queue refused was dropped, and one on its way is pending", async () => {
    const o = await seedOrg();
    const refusing = { send: () => Promise.reject(new Error("queue down")), sendBatch: () => Promise.reject(new Error("queue down")) };
    const auth = { organization: { id: o.orgId, compliance: {} }, project: { id: o.projectId, logBodies: true }, key: { id: "key_status" } } as unknown as KeyContext;
    const createdAt = Date.now();
    const logId = newId("log");
    const requestId = newId("req");
    const waits: Array<Promise<unknown>> = [];
    const group = queueBodies({ ...env, LOGS: refusing } as unknown as Env, (p) => waits.push(p), { auth, logId, requestId, createdAt, request: { q: 1 }, response: { a: 1 } })!.group;
    await Promise.all(waits);
    // A record naming a group that is still on its way (nothing stored, nothing refused).
    const pendingId = newId("req");
    const row = (id: string, reqId: string, batch: string, at: number) => ({ id, requestId: reqId, organizationId: o.orgId, projectId: o.projectId, apiKeyId: "key_status", requestedModel: "gpt-4o-mini", statusCode: 200, createdAt: at, extra: { bodies: true, bodyBatch: batch } });
    await applyRows([row(logId, requestId, group!, createdAt), row(newId("log"), pendingId, "bb_onitsway", createdAt)]);

    const dropped = (await (await call(`/v1/master/logs/${requestId}`, { key: o.masterKey })).json()) as Json;
    expect(dropped.bodiesStatus).toBe("dropped");
    expect("requestBody" in dropped).toBe(false);
    // The request page says the same, and its metadata does not show the group.
    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const page = await (await call(`/dashboard/requests/${logId}?project=${o.projectId}&at=${createdAt}`, { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    expect(page).toContain("Not stored: they could not be queued");
    expect(page).not.toContain("Not stored yet");
    expect(page).not.toContain("bodyBatch");
    const pending = (await (await call(`/v1/master/logs/${pendingId}`, { key: o.masterKey })).json()) as Json;
    expect(pending.bodiesStatus).toBe("pending");
    // Past every retry, a group that never came reads as dropped too (even had the mark failed).
    const oldId = newId("req");
    const old = Date.now() - BODIES_SETTLED_MS - 3_600_000;
    await applyRows([row(newId("log"), oldId, "bb_nevercame", old)]);
    const never = (await (await call(`/v1/master/logs/${oldId}?at=${old}`, { key: o.masterKey })).json()) as Json;
    expect(never.bodiesStatus).toBe("dropped");
  });

  it("the Requests page's kept-bodies filter counts a dropped group as not kept, in the window and in the archive", async () => {
    const o = await seedOrg();
    const refusing = { send: () => Promise.reject(new Error("queue down")), sendBatch: () => Promise.reject(new Error("queue down")) };
    const auth = { organization: { id: o.orgId, compliance: {} }, project: { id: o.projectId, logBodies: true }, key: { id: "key_filter" } } as unknown as KeyContext;
    const createdAt = Date.now();
    const row = (at: number, extra: Json | null) => ({ id: newId("log"), requestId: newId("req"), organizationId: o.orgId, projectId: o.projectId, apiKeyId: o.keyId, requestedModel: "gpt-4o-mini", statusCode: 200, createdAt: at, extra });
    const waits: Array<Promise<unknown>> = [];
    const droppedRow = row(createdAt, null);
    const place = queueBodies({ ...env, LOGS: refusing } as unknown as Env, (p) => waits.push(p), { auth, logId: droppedRow.id, requestId: droppedRow.requestId, createdAt, request: { q: 1 }, response: { a: 1 } })!;
    await Promise.all(waits);
    droppedRow.extra = { bodies: true, bodyBatch: place.group, bodyIndex: place.index };
    const pendingRow = row(createdAt + 1, { bodies: true, bodyBatch: "bb_onitsway" });
    const noneRow = row(createdAt + 2, null);
    await applyRows([droppedRow, pendingRow, noneRow]);
    expect(((await (await call(`/v1/master/logs/${droppedRow.requestId}`, { key: o.masterKey })).json()) as Json).bodiesStatus).toBe("dropped");

    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const list = async (q: string) => {
      const page = await (await call(`/dashboard/requests?project=${o.projectId}&${q}`, { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
      return [...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]!).sort();
    };
    // A group on its way will be stored: kept. A dropped one never will: not kept, as its record says.
    expect(await list("body=yes")).toEqual([pendingRow.id]);
    expect(await list("body=no")).toEqual([droppedRow.id, noneRow.id].sort());

    // Requests older than the window are filtered in R2's hour objects: the same answer (here with
    // a group's mark from before marks were per request, and records from before places in a
    // group: kept unless marked, as then).
    const old = Date.UTC(2026, 2, 9, 10, 0, 0);
    await env.DB.prepare("INSERT INTO dropped_body_groups (organization_id, batch, created_at) VALUES (?1, ?2, ?3)").bind(o.orgId, "bb_oldgroup", old).run();
    const oldDropped = row(old, { bodies: true, bodyBatch: "bb_oldgroup" });
    const oldKept = row(old + 60_000, { bodies: true, bodyBatch: "bb_oldstored" });
    await applyRows([oldDropped, oldKept]);
    const period = "from=2026-03-09&to=2026-03-09";
    expect(await list(`${period}&body=yes`)).toEqual([oldKept.id]);
    expect(await list(`${period}&body=no`)).toEqual([oldDropped.id]);
  });

  it("a request whose drop mark only D1 holds (R2 refused its half) reads as dropped, not pending", async () => {
    const o = await seedOrg();
    const requestId = newId("req");
    const logId = newId("log");
    const createdAt = Date.now();
    await applyRows([{ id: logId, requestId, organizationId: o.orgId, projectId: o.projectId, apiKeyId: o.keyId, requestedModel: "gpt-4o-mini", statusCode: 200, createdAt, extra: { bodies: true, bodyBatch: newId("bb") } }]);
    await env.DB.prepare("INSERT INTO dropped_bodies (organization_id, log_id, created_at) VALUES (?1, ?2, ?3)").bind(o.orgId, logId, createdAt).run();
    const one = (await (await call(`/v1/master/logs/${requestId}`, { key: o.masterKey })).json()) as Json;
    expect(one.bodiesStatus).toBe("dropped");
  });

  it("a group's marks from before marks were per request still drop all its requests: the D1 row, or the empty R2 object", async () => {
    const o = await seedOrg();
    const createdAt = Date.now();
    const row = (batch: string) => ({ id: newId("log"), requestId: newId("req"), organizationId: o.orgId, projectId: o.projectId, apiKeyId: o.keyId, requestedModel: "gpt-4o-mini", statusCode: 200, createdAt, extra: { bodies: true, bodyBatch: batch } });
    const inD1 = newId("bb");
    const inR2 = newId("bb");
    await env.DB.prepare("INSERT INTO dropped_body_groups (organization_id, batch, created_at) VALUES (?1, ?2, ?3)").bind(o.orgId, inD1, createdAt).run();
    await env.LOGS_BUCKET.put(`${bodyDayPrefix(o.orgId, createdAt)}${String(new Date(createdAt).getUTCHours()).padStart(2, "0")}/${inR2}.dropped`, "");
    const rows = [row(inD1), row(inD1), row(inR2)];
    await applyRows(rows);
    for (const r of rows) expect(((await (await call(`/v1/master/logs/${r.requestId}`, { key: o.masterKey })).json()) as Json).bodiesStatus).toBe("dropped");
    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const page = await (await call(`/dashboard/requests?project=${o.projectId}&body=no`, { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    expect([...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]!)).toEqual(expect.arrayContaining([rows[0]!.id, rows[1]!.id]));
  });

  it("a group the consumer cannot store on its last delivery is marked dropped at once; an earlier delivery leaves it pending", async () => {
    const o = await seedOrg();
    const auth = { organization: { id: o.orgId, compliance: {} }, project: { id: o.projectId, logBodies: true }, key: { id: "key_consumer" } } as unknown as KeyContext;
    // R2 refuses the bodies' objects (the drop mark, an empty object, still goes through).
    const bucket = new Proxy(env.LOGS_BUCKET, {
      get(target, prop) {
        if (prop === "put") return (...args: Parameters<R2Bucket["put"]>) => (args[0].endsWith(".json.gz") ? Promise.reject(new Error("R2 down")) : target.put(...args));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const failing = Object.create(env, { LOGS_BUCKET: { value: bucket } }) as Env;
    const createdAt = Date.now();
    /** One group's message delivered for the `attempts`th time to a consumer whose R2 fails; its record applied. */
    const deliver = async (attempts: number) => {
      const row = { id: newId("log"), requestId: newId("req"), organizationId: o.orgId, projectId: o.projectId, apiKeyId: o.keyId, requestedModel: "gpt-4o-mini", statusCode: 200, createdAt, extra: null as Json | null };
      const group = { id: newId("bb"), items: [{ auth, logId: row.id, requestId: row.requestId, createdAt, request: { q: 1 }, response: { a: 1 } }] };
      const messages = groupMessages(group).map(({ body }, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body, ack: () => undefined, retry: () => undefined }));
      const batch = { queue: "switchboard-logs", messages, ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>;
      // It still fails: the queue retries it, or moves it to the dead-letter queue.
      await expect(consumeLogBatch(batch, failing)).rejects.toThrow(/R2 down/);
      row.extra = { bodies: true, bodyBatch: group.id };
      await applyRows([row]);
      const marks = await env.DB.prepare("SELECT COUNT(*) AS n FROM dropped_bodies WHERE organization_id = ?1 AND log_id = ?2").bind(o.orgId, row.id).first<{ n: number }>();
      const status = ((await (await call(`/v1/master/logs/${row.requestId}`, { key: o.masterKey })).json()) as Json).bodiesStatus as string;
      return { row, marked: marks?.n ?? 0, status };
    };

    const last = await deliver(LOGS_MAX_RETRIES + 1);
    expect([last.marked, last.status]).toEqual([1, "dropped"]);
    const earlier = await deliver(LOGS_MAX_RETRIES);
    expect([earlier.marked, earlier.status]).toEqual([0, "pending"]);

    // The Requests page's kept-bodies filter agrees: the group still on its retries may yet be stored.
    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const list = async (q: string) => {
      const page = await (await call(`/dashboard/requests?project=${o.projectId}&${q}`, { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
      return [...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]!);
    };
    expect(await list("body=yes")).toEqual([earlier.row.id]);
    expect(await list("body=no")).toEqual([last.row.id]);
  });

  it("on a last delivery, only the requests whose objects failed are marked, not the batch's others", async () => {
    const o = await seedOrg();
    const auth = { organization: { id: o.orgId, compliance: {} }, project: { id: o.projectId, logBodies: true }, key: { id: "key_partial" } } as unknown as KeyContext;
    const lost = { id: newId("bb"), items: [{ auth, logId: newId("log"), requestId: newId("req"), createdAt: Date.now(), request: { q: 1 }, response: { a: 1 } }] };
    const kept = { id: newId("bb"), items: [{ auth, logId: newId("log"), requestId: newId("req"), createdAt: Date.now(), request: { q: 2 }, response: { a: 2 } }] };
    const bucket = new Proxy(env.LOGS_BUCKET, {
      get(target, prop) {
        if (prop === "put") return (...args: Parameters<R2Bucket["put"]>) => (args[0].includes(`${lost.id}.`) && args[0].endsWith(".json.gz") ? Promise.reject(new Error("R2 down")) : target.put(...args));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const messages = [...groupMessages(lost), ...groupMessages(kept)].map(({ body }, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: LOGS_MAX_RETRIES + 1, body, ack: () => undefined, retry: () => undefined }));
    const batch = { queue: "switchboard-logs", messages, ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>;
    await expect(consumeLogBatch(batch, Object.create(env, { LOGS_BUCKET: { value: bucket } }) as Env)).rejects.toThrow(/R2 down/);
    const marked = await env.DB.prepare("SELECT log_id FROM dropped_bodies WHERE organization_id = ?1").bind(o.orgId).all<{ log_id: string }>();
    expect(marked.results.map((r) => r.log_id)).toEqual([lost.items[0]!.logId]);
  });
});

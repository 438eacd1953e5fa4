/**
 * Request bodies leave an isolate in groups (src/usage/body-batch.ts): the requests finishing
 * meanwhile share one queue send and one R2 object, named by their records; each request's bodies
 * are still read back, and each request is exported as exactly one span carrying them, also a
 * stream whose client went away mid-answer.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg } from "../helpers/fixtures";
import { chat, setProject, user, waitForLog } from "../chat/helpers";
import { queueBodies } from "../../src/usage/body-batch";
import { bodyMessageOf, type BodyMessage } from "../../src/usage/bodies";
import type { KeyContext } from "../../src/context/key-context";
import type { Env } from "../../src/env";

type Json = Record<string, any>;

describe("bodies in groups", () => {
  it("sends the bodies of requests finishing together once, as one group their records name", async () => {
    const sent: BodyMessage[][] = [];
    const LOGS = {
      send: () => Promise.reject(new Error("one send per request")),
      sendBatch: async (batch: Iterable<{ body: BodyMessage }>) => {
        sent.push([...batch].map((m) => m.body));
      },
    };
    const auth = { organization: { id: "org_g", compliance: {} }, project: { id: "prj_g", logBodies: true }, key: { id: "key_g" } } as unknown as KeyContext;
    const waits: Array<Promise<unknown>> = [];
    const refs = [1, 2, 3].map((i) =>
      queueBodies({ ...env, LOGS } as unknown as Env, (p) => waits.push(p), { auth, logId: `log_g${i}`, requestId: `req_g${i}`, createdAt: Date.now(), request: { n: i }, response: { ok: i } }),
    );
    await Promise.all(waits);
    // One group, each request at its place in it (the order they joined).
    expect(new Set(refs.map((r) => r?.group)).size).toBe(1);
    expect(refs.map((r) => r?.index)).toEqual([0, 1, 2]);
    expect(sent).toHaveLength(1);
    const message = bodyMessageOf(sent[0]![0]);
    expect(message?.batch).toBe(refs[0]?.group);
    expect(message?.first).toBe(0);
    expect(message?.bodies.map((b) => b.logId)).toEqual(["log_g1", "log_g2", "log_g3"]);
    // A project that keeps no bodies sends nothing and names no group.
    const off = { ...auth, project: { id: "prj_g", logBodies: false } } as unknown as KeyContext;
    expect(queueBodies({ ...env, LOGS } as unknown as Env, (p) => waits.push(p), { auth: off, logId: "log_x", requestId: "req_x", createdAt: Date.now(), request: {}, response: {} })).toBeNull();
  });

  it("keeps every request's bodies and exports each request once, a stream cut mid-answer included", async () => {
    const o = await seedOrg();
    await setProject(o.projectId, { logBodies: true });
    const name = `body-groups-${crypto.randomUUID().slice(0, 8)}`;
    // The collector refuses the first two POSTs: the spans are retried, never doubled.
    const endpoint = `${env.FAKE_UPSTREAM_URL}/receiver/${name}/fail=2`;
    expect((await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: { otlpEndpoint: endpoint } }) })).status).toBe(200);

    const answered = await Promise.all([1, 2, 3, 4].map((i) => chat(o.key, { model: "gpt-4o-mini", messages: user(`question ${i}`) })));
    const ids = answered.map((r) => r.headers.get("x-request-id")!);
    // A stream whose client leaves after its first chunks.
    const stream = await chat(o.key, { model: "gpt-4o-mini", stream: true, messages: user("long answer [[fake:words=40,drip=50]]") });
    const reader = stream.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.read();
    await reader.cancel();
    const cutId = stream.headers.get("x-request-id")!;
    expect((await waitForLog(cutId, 8000)).clientAborted).toBe(true);
    const all = [...ids, cutId];
    for (const id of ids) await waitForLog(id);

    // Bodies: read back for each request (the cut stream's answer is what it had produced).
    const records = new Map<string, Json>();
    for (const id of all) {
      const deadline = Date.now() + 8000;
      let r: Json;
      do {
        r = (await (await call(`/v1/master/logs/${id}`, { key: o.masterKey })).json()) as Json;
        if (!("responseBody" in r)) await new Promise((ok) => setTimeout(ok, 50));
      } while (!("responseBody" in r) && Date.now() < deadline);
      expect(r.requestBody.messages[0].content).toContain(id === cutId ? "long answer" : "question");
      records.set(id, { ...r, bodyBatch: ((await waitForLog(id)).extra as Json).bodyBatch });
    }
    expect(records.get(ids[0]!)!.responseBody.choices[0].message.content).toBe("Hello from openai/gpt-4o-mini");
    expect(records.get(cutId)!.responseBody.choices[0].message.content.length).toBeGreaterThan(0);
    // One object per group, not per request (how many groups depends on when each answer ended).
    const objects = (await env.LOGS_BUCKET.list({ prefix: `bodies/${o.orgId}/` })).objects;
    expect(objects.length).toBe(new Set(all.map((id) => records.get(id)!.bodyBatch)).size);

    // Spans: each request accepted exactly once, with its bodies as the operation-details event.
    const deadline = Date.now() + 15_000;
    let accepted: Json[] = [];
    for (;;) {
      const posts = (await (await fetch(`${env.FAKE_UPSTREAM_URL}/receiver/${name}`)).json()) as Array<{ status: number; body: string }>;
      accepted = posts.filter((p) => p.status === 200).flatMap((p) => (JSON.parse(p.body) as Json).resourceSpans.flatMap((rs: Json) => rs.scopeSpans.flatMap((ss: Json) => ss.spans)));
      if (accepted.length >= all.length || Date.now() > deadline) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    const idOf = (s: Json) => s.attributes.find((a: Json) => a.key === "switchboard.request_id").value.stringValue as string;
    expect(accepted.map(idOf).sort()).toEqual([...all].sort());
    for (const s of accepted) expect(s.events?.[0]?.name).toBe("gen_ai.client.inference.operation.details");
  });
});

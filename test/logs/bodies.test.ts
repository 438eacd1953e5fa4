/**
 * Request and response bodies for projects with `logBodies`: kept in R2 beside the record (never
 * in D1), streams assembled, secrets never stored, personal data masked on request, capped, read
 * back by `GET /v1/master/logs/{requestId}` within the organization only, deleted by retention.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, readSse, setProject, user, waitForLog } from "../chat/helpers";
import { BODY_CAP_BYTES, bodyDayPrefix, deleteExpiredBodies, deleteExpiredDropMarks, groupKey, markDropped } from "../../src/usage/bodies";
import { redactPersonalText } from "../../src/usage/redact";

type Json = Record<string, any>;

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  const res = await call(`/v1/master/projects/${org.projectId}`, { method: "PATCH", key: org.masterKey, headers: { "content-type": "application/json" }, body: JSON.stringify({ logBodies: true }) });
  expect(res.status).toBe(200);
  expect(((await res.json()) as Json).project.logBodies).toBe(true);
});

/** The record with its bodies, once the consumer has stored them. */
async function recordOf(o: SeededOrg, requestId: string, timeoutMs = 8000): Promise<Json> {
  await waitForLog(requestId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`/v1/master/logs/${requestId}`, { key: o.masterKey });
    expect(res.status).toBe(200);
    const r = (await res.json()) as Json;
    if ("responseBody" in r || Date.now() > deadline) return r;
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

async function allBodyObjects(orgId: string): Promise<string[]> {
  const list = await env.LOGS_BUCKET.list({ prefix: `bodies/${orgId}/` });
  return list.objects.map((o) => o.key);
}

describe("request bodies (logBodies)", () => {
  it("keeps the prompt and the answer of a JSON completion, in R2 and not in D1", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: [{ role: "system", content: "be brief" }, ...user("hello there")] });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id")!;
    const r = await recordOf(org, requestId);
    expect(r.requestId).toBe(requestId);
    expect(r.requestBody.messages).toEqual([{ role: "system", content: "be brief" }, { role: "user", content: "hello there" }]);
    expect(r.responseBody.choices[0].message.content).toBe("Hello from openai/gpt-4o-mini");
    // In the object of the group its bodies left with, which the record names (internally: not in the API's record).
    const batch = ((await waitForLog(requestId)).extra as Json).bodyBatch as string;
    expect(typeof batch).toBe("string");
    expect(await allBodyObjects(org.orgId)).toContain(groupKey(org.orgId, r.createdAt, batch, 0));
    const row = await env.DB.prepare("SELECT * FROM request_logs WHERE request_id = ?").bind(requestId).first<Json>();
    expect(JSON.stringify(row)).not.toContain("hello there");
  });

  it("assembles a stream's answer: text, tool calls and reasoning", async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const res = await chat(org.key, { model: "gpt-4o-mini", stream: true, tools, messages: user("use a tool [[fake:tools,reasoning]]") });
    await readSse(res);
    const r = await recordOf(org, res.headers.get("x-request-id")!);
    const message = r.responseBody.choices[0].message;
    expect(message.tool_calls[0].function).toEqual({ name: "lookup", arguments: JSON.stringify({ q: "test" }) });
    expect(typeof message.reasoning).toBe("string");
    expect(message.reasoning.length).toBeGreaterThan(0);
  });

  it("never stores a gateway key, a provider key or an Authorization value", async () => {
    const secret = org.key;
    const body = {
      model: "gpt-4o-mini",
      messages: user(`my key is ${secret} and sk-proj-abcdefghijklmnopqrstuvwx1234 and Bearer abcdefghijklmnopqrstuvwxyz0123`),
      metadata: { authorization: "Bearer something-secret-enough", api_key: "plain-value" },
    };
    const res = await chat(org.key, body);
    expect(res.status).toBe(200);
    const r = await recordOf(org, res.headers.get("x-request-id")!);
    const stored = JSON.stringify(r.requestBody);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain("sk-proj-abcdefghijklmnopqrstuvwx1234");
    expect(stored).not.toContain("abcdefghijklmnopqrstuvwxyz0123");
    expect(stored).not.toContain("something-secret-enough");
    expect(stored).not.toContain("plain-value");
    expect(stored).toContain("[secret]");
  });

  it("masks e-mail addresses, phone and card numbers when the organization asks", async () => {
    const o = await seedOrg();
    await setProject(o.projectId, { logBodies: true });
    const patch = await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, headers: { "content-type": "application/json" }, body: JSON.stringify({ compliance: { redactBodies: true } }) });
    expect(patch.status).toBe(200);
    const res = await chat(o.key, { model: "gpt-4o-mini", messages: user("mail jane.doe@example.com call +1 415-555-0100 card 4111 1111 1111 1111") });
    const r = await recordOf(o, res.headers.get("x-request-id")!);
    const text = r.requestBody.messages[0].content as string;
    expect(text).toBe("mail [email] call [phone] card [card]");
    expect(redactPersonalText("order 1234567890123 ok")).toBe("order 1234567890123 ok"); // not a Luhn number, not a phone
  });

  it("caps each side at the documented size and marks it truncated", async () => {
    const big = "word ".repeat(BODY_CAP_BYTES / 4);
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user(big) });
    expect(res.status).toBe(200);
    const r = await recordOf(org, res.headers.get("x-request-id")!);
    expect(typeof r.requestBody).toBe("string");
    expect(new TextEncoder().encode(r.requestBody).length).toBeLessThanOrEqual(BODY_CAP_BYTES);
    expect(r.bodiesTruncated).toEqual({ request: true, response: false });
  });

  it("keeps nothing for a project without logBodies, and another organization gets 404", async () => {
    const o = await seedOrg();
    const res = await chat(o.key, { model: "gpt-4o-mini", messages: user("not kept") });
    const requestId = res.headers.get("x-request-id")!;
    await waitForLog(requestId);
    await new Promise((ok) => setTimeout(ok, 300));
    const r = (await (await call(`/v1/master/logs/${requestId}`, { key: o.masterKey })).json()) as Json;
    expect(r.requestId).toBe(requestId);
    expect("requestBody" in r).toBe(false);
    expect(await allBodyObjects(o.orgId)).toEqual([]);
    expect((await call(`/v1/master/logs/${requestId}`, { key: org.masterKey })).status).toBe(404);
    expect((await call(`/v1/master/logs/bad id!`, { key: org.masterKey })).status).toBe(400);
  });

  it("deletes bodies past the retention period with the records", async () => {
    const o = await seedOrg();
    const old = Date.now() - 40 * 86_400_000;
    const key = `${bodyDayPrefix(o.orgId, old)}00/log_old.json.gz`;
    await env.LOGS_BUCKET.put(key, "x");
    const fresh = `${bodyDayPrefix(o.orgId, Date.now())}00/log_new.json.gz`;
    await env.LOGS_BUCKET.put(fresh, "x");
    await deleteExpiredBodies(env, Date.now(), 30, 15);
    expect(await allBodyObjects(o.orgId)).toEqual([fresh]);
    // The D1 drop marks go with them (a group's marks from before marks were per request too).
    await markDropped(env, [{ bodies: [{ logId: "log_oldmark", organizationId: o.orgId }] }], old);
    await markDropped(env, [{ bodies: [{ logId: "log_newmark", organizationId: o.orgId }] }]);
    const groupMark = env.DB.prepare("INSERT INTO dropped_body_groups (organization_id, batch, created_at) VALUES (?1, ?2, ?3)");
    await env.DB.batch([groupMark.bind(o.orgId, "bb_oldgroup", old), groupMark.bind(o.orgId, "bb_newgroup", Date.now())]);
    // So do the notes of stored objects (by the hour of their requests).
    const storedNote = env.DB.prepare("INSERT INTO stored_body_parts (hour_start, organization_id, batch, first_index, last_index) VALUES (?1, ?2, ?3, 0, 0)");
    await env.DB.batch([storedNote.bind(old - (old % 3_600_000), o.orgId, "bb_oldstored"), storedNote.bind(Date.now() - (Date.now() % 3_600_000), o.orgId, "bb_newstored")]);
    await deleteExpiredDropMarks(env, Date.now(), 30);
    const marks = await env.DB.prepare("SELECT log_id FROM dropped_bodies WHERE organization_id = ?1").bind(o.orgId).all<{ log_id: string }>();
    expect(marks.results.map((m) => m.log_id)).toEqual(["log_newmark"]);
    const groups = await env.DB.prepare("SELECT batch FROM dropped_body_groups WHERE organization_id = ?1").bind(o.orgId).all<{ batch: string }>();
    expect(groups.results.map((m) => m.batch)).toEqual(["bb_newgroup"]);
    const stored = await env.DB.prepare("SELECT batch FROM stored_body_parts WHERE organization_id = ?1").bind(o.orgId).all<{ batch: string }>();
    expect(stored.results.map((m) => m.batch)).toEqual(["bb_newstored"]);
  });
});

/**
 * The request page as a trace (timeline of admission and attempts, failover reasons, cost and
 * tokens per attempt, the requests of one conversation), the Requests page's app / end user /
 * kept-bodies filters on the D1 window and on the R2 archive, and the Usage page's latency
 * percentiles, through real requests and the real log consumer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { applyRows, type LogRowInsert } from "../helpers/logs";
import { chat, resetMetrics, setProject, user, waitForLog, type LogRow } from "../chat/helpers";
import { signIn, type Session } from "./session";
import { newId } from "../../src/lib/ids";

const MODEL = "llama-3.3-70b-instruct";
let org: SeededOrg;
let owner: Session;
const ids: Record<string, string> = {};

const html = (path: string) => call(path, { headers: { cookie: owner.cookie, accept: "text/html" } }).then((r) => r.text());
const rowIds = (page: string) => [...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]!).sort();

async function send(name: string, content: string, headers: Record<string, string>, extra: Record<string, unknown> = {}) {
  const res = await chat(org.key, { model: MODEL, messages: user(content), ...extra }, headers);
  expect(res.status).toBe(200);
  ids[name] = res.headers.get("x-request-id")!;
  return waitForLog(ids[name]!);
}

beforeAll(async () => {
  await resetMetrics();
  org = await seedOrg();
  owner = await signIn(org.ownerEmail, org.ownerPassword);
  await send("failover", "hi [[fake@deepinfra:status=500]]", { "x-session-id": "sess-1" }, { user: "alice" });
  await send("second", "and again", { "x-session-id": "sess-1", "x-source": "cursor" });
  await send("other", "another conversation", { "x-session-id": "sess-2" });
  await setProject(org.projectId, { logBodies: true });
  await send("kept", "keep me", {});
});

describe("the request page as a trace", () => {
  it("records the conversation labels, admission timing and each attempt's start", async () => {
    const log = await waitForLog(ids.failover!);
    expect(log.extra).toMatchObject({ sessionId: "sess-1", user: "alice", admission: { at: expect.any(Number), ms: expect.any(Number) } });
    expect(log.extra).not.toHaveProperty("bodies");
    expect(log.routing.map((a) => [a.provider, a.succeeded, typeof a.start_ms])).toEqual([
      ["deepinfra", false, "number"],
      ["nebius", true, "number"],
    ]);
    expect(log.routing[1]!.start_ms!).toBeGreaterThanOrEqual(log.routing[0]!.start_ms!);
    expect((await waitForLog(ids.kept!)).extra).toMatchObject({ bodies: true });
  });

  it("draws admission and every attempt with its outcome, TTFT, duration, tokens and cost", async () => {
    const log = await waitForLog(ids.failover!);
    const page = await html(`/dashboard/requests/${log.id}?project=${org.projectId}&at=${log.createdAt}`);
    expect(page).toContain("Timeline and routing attempts");
    const row = (step: string) => {
      const i = page.indexOf(`data-step="${step}"`);
      expect(i, step).toBeGreaterThan(0);
      return page.slice(i, page.indexOf("</tr>", i));
    };
    expect(row("phase")).toContain("Admission");
    const failed = row("bad");
    expect(failed).toContain("deepinfra");
    expect(failed).toMatch(/HTTP 500/);
    expect(failed).toContain("$0");
    const answered = row("ok");
    expect(answered).toContain("nebius");
    expect(answered).toContain("answered");
    expect(answered).toMatch(/\d+ in · \d+ out/);
    expect(answered).toMatch(/<rect class="bar-ok"/);
    expect(answered).toMatch(/<rect class="bar-tick"/);
  });

  it("links the requests of the same x-session-id, and only those", async () => {
    const log = await waitForLog(ids.failover!);
    const page = await html(`/dashboard/requests/${log.id}?project=${org.projectId}&at=${log.createdAt}`);
    const section = page.slice(page.indexOf('id="conversation"'), page.indexOf("</ol>", page.indexOf('id="conversation"')));
    const second = await waitForLog(ids.second!);
    const other = await waitForLog(ids.other!);
    expect(section).toContain(`data-log-id="${log.id}"`);
    expect(section).toContain('aria-current="page"');
    expect(section).toContain(`data-log-id="${second.id}"`);
    expect(section).toContain(`/dashboard/requests/${second.id}?`);
    expect(section).not.toContain(other.id);
    expect(page).toContain("sess-1");
  });
});

describe("Requests page filters", () => {
  const list = (q: string) => html(`/dashboard/requests?project=${org.projectId}&${q}`).then(rowIds);

  it("filters the window by app, end user and kept bodies", async () => {
    const [failover, second, other, kept] = (await Promise.all(["failover", "second", "other", "kept"].map((n) => waitForLog(ids[n]!)))) as [LogRow, LogRow, LogRow, LogRow];
    expect(await list("app=Cursor")).toEqual([second.id]);
    expect(await list("user=alice")).toEqual([failover.id]);
    expect(await list("body=yes")).toEqual([kept.id]);
    expect(await list("body=no")).toEqual([failover.id, second.id, other.id].sort());
    // A value the form never offers falls back to no filter, not an error.
    expect(await list("body=maybe")).toHaveLength(4);
  });

  it("applies the same filters to requests older than the window, read from R2", async () => {
    const t = Date.UTC(2026, 2, 7, 10, 0, 0); // older than the 30-day window
    const base = (i: number, extra: Record<string, unknown> | null, sourceApp = "cline"): LogRowInsert => ({
      id: newId("log"), requestId: newId("req"), organizationId: org.orgId, projectId: org.projectId, apiKeyId: org.keyId, sourceApp,
      requestedModel: "gpt-4o-mini", usedModel: "gpt-4o-mini", usedProvider: "openai", statusCode: 200, createdAt: t + i * 60_000, routing: [], extra,
    });
    const rows = [base(0, { user: "bob", bodies: true }), base(1, { user: "carol" }, "cursor"), base(2, null)];
    await applyRows(rows);
    const period = "from=2026-03-07&to=2026-03-07";
    const page = await html(`/dashboard/requests?project=${org.projectId}&${period}&user=bob`);
    expect(page).toContain("request archive");
    expect(rowIds(page)).toEqual([rows[0]!.id]);
    expect(await list(`${period}&body=yes`)).toEqual([rows[0]!.id]);
    expect(await list(`${period}&app=cursor`)).toEqual([rows[1]!.id]);
    expect(await list(`${period}&body=no`)).toEqual([rows[1]!.id, rows[2]!.id].sort());
  });

  it("another organization's session sees none of it", async () => {
    const b = await seedOrg();
    const s = await signIn(b.ownerEmail, b.ownerPassword);
    const page = await call(`/dashboard/requests?user=alice`, { headers: { cookie: s.cookie, accept: "text/html" } }).then((r) => r.text());
    expect(rowIds(page)).toEqual([]);
  });
});

describe("Usage page latency", () => {
  it("shows p50/p95 TTFT and latency per model and per provider from the hourly aggregates", async () => {
    const page = await html(`/dashboard/usage?project=${org.projectId}`);
    expect(page).toContain("Latency by model");
    expect(page).toContain("Latency by provider");
    const section = page.slice(page.indexOf('id="usage-latency"'));
    const nebius = section.slice(section.indexOf("Nebius"), section.indexOf("</tr>", section.indexOf("Nebius")));
    expect(nebius).toMatch(/data-label="Latency p50">\d+ ms</);
    expect(nebius).toMatch(/data-label="TTFT p95">\d+ ms</);
  });
});

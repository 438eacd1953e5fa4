/**
 * Reading request records back (contract section 7): `GET /v1/master/logs` streams exactly the
 * organization's records of a period (NDJSON, or CSV), the dashboard's download and its Requests
 * page show the session's scope (owners: the project; developers: their own keys).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { applyRows, incoming, type LogRowInsert } from "../helpers/logs";
import { chat, user, waitForLog } from "../chat/helpers";
import { signIn, type Session } from "../dashboard/session";
import { newId } from "../../src/lib/ids";
import { csvHeader, type LogRecord } from "../../src/usage/log-record";
import { HOUR_MS } from "../../src/usage/aggregate";
import { appDisplayName } from "../../src/usage/source-app";

const T0 = Date.UTC(2026, 2, 5, 10, 0, 0); // older than the 30-day window: R2 only
const iso = (t: number) => new Date(t).toISOString();

function row(org: SeededOrg, keyId: string, at: number, i: number): LogRowInsert {
  return {
    id: newId("log"),
    requestId: newId("req"),
    organizationId: org.orgId,
    projectId: org.projectId,
    apiKeyId: keyId,
    sourceApp: i % 2 ? "cursor" : "cline",
    requestedModel: i % 3 ? "gpt-4o-mini" : "claude-sonnet-4",
    usedModel: i % 3 ? "gpt-4o-mini" : "claude-sonnet-4",
    usedProvider: i % 3 ? "openai" : "anthropic",
    statusCode: i % 4 ? 200 : 429,
    errorType: i % 4 ? null : "rate_limit_error",
    promptTokens: i,
    totalTokens: i,
    costPico: 1000 * i,
    latencyMs: 10 + i,
    routing: [{ provider: "openai", model: "gpt-4o-mini", status_code: 200, succeeded: true, credentialSource: "credits", latency_ms: 5 }],
    extra: { note: `n${i}` },
    createdAt: at,
  };
}

const parse = (text: string): LogRecord[] => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogRecord);
const sorted = (list: LogRecord[]) => [...list].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));

async function addDeveloper(org: SeededOrg) {
  const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "Dev", role: "developer", password }) });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { member: { id: string } }).member.id, email, password };
}

let a: SeededOrg;
let b: SeededOrg;
let devKeyId: string;
let owner: Session;
let dev: Session;
const sentA: LogRecord[] = [];
const sentB: LogRecord[] = [];

beforeAll(async () => {
  a = await seedOrg();
  b = await seedOrg();
  const d = await addDeveloper(a);
  devKeyId = (await addKey(a, { createdBy: d.id, description: "dev key" })).row.id;
  const rowsA = Array.from({ length: 60 }, (_, i) => row(a, i % 3 === 0 ? devKeyId : a.keyId, T0 + i * 3 * 60_000, i)); // 3 hours
  const rowsB = Array.from({ length: 10 }, (_, i) => row(b, b.keyId, T0 + i * 60_000, i));
  sentA.push(...rowsA.map((r) => incoming(r).record));
  sentB.push(...rowsB.map((r) => incoming(r).record));
  await applyRows([...rowsA.slice(0, 30), ...rowsB]);
  await applyRows(rowsA.slice(30));
  owner = await signIn(a.ownerEmail, a.ownerPassword);
  dev = await signIn(d.email, d.password);
});

describe("GET /v1/master/logs", () => {
  it("a real request's record carries its x-request-id", async () => {
    const res = await chat(a.key, { model: "gpt-4o-mini", messages: user("log me") });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id")!;
    await waitForLog(requestId, 10_000);
    const now = Date.now();
    const out = await call(`/v1/master/logs?from=${iso(now - HOUR_MS)}&to=${iso(now + 60_000)}`, { key: a.masterKey });
    expect(out.status).toBe(200);
    expect(out.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const lines = parse(await out.text());
    expect(lines.map((l) => l.requestId)).toContain(requestId);
    expect(lines.find((l) => l.requestId === requestId)).toMatchObject({ organizationId: a.orgId, apiKeyId: a.keyId, statusCode: 200, requestedModel: "gpt-4o-mini" });
  });

  it("streams exactly what was sent in the period, oldest first, and never another organization's records", async () => {
    const res = await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}`, { key: a.masterKey });
    expect(res.status).toBe(200);
    expect(parse(await res.text())).toEqual(sorted(sentA));
    // Part of an hour.
    const part = await call(`/v1/master/logs?from=${iso(T0 + 30 * 60_000)}&to=${iso(T0 + 90 * 60_000)}`, { key: a.masterKey });
    expect(parse(await part.text())).toEqual(sorted(sentA.filter((r) => r.createdAt >= T0 + 30 * 60_000 && r.createdAt < T0 + 90 * 60_000)));
    const other = await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}`, { key: b.masterKey });
    expect(parse(await other.text())).toEqual(sorted(sentB));
  });

  it("an empty period is 200 with no lines; Accept: text/csv gives CSV", async () => {
    const empty = await call(`/v1/master/logs?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`, { key: a.masterKey });
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe("");
    const csv = await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}`, { key: a.masterKey, headers: { accept: "text/csv" } });
    expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
    const lines = (await csv.text()).trimEnd().split("\n");
    expect(lines[0] + "\n").toBe(csvHeader());
    expect(lines).toHaveLength(1 + sentA.length);
    expect(lines[1]!.split(",")[0]).toBe(sorted(sentA)[0]!.id);
  });

  it("refuses bad periods with a clear 400, and callers without a master key", async () => {
    for (const [q, re] of [
      ["from=2026-03-05T00:00:00Z", /'to' is required/],
      ["from=yesterday&to=2026-03-05", /'from' must be an ISO 8601/],
      ["from=2026-03-05&to=2026-03-04", /'from' must be before 'to'/],
      ["from=2026-01-01&to=2026-03-05", /at most 31 days/],
    ] as const) {
      const res = await call(`/v1/master/logs?${q}`, { key: a.masterKey });
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message, q).toMatch(re);
    }
    expect((await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + HOUR_MS)}`, { key: a.key })).status).toBe(401);
  });
});

describe("dashboard", () => {
  const html = (s: Session, path: string) => call(path, { headers: { cookie: s.cookie, accept: "text/html" } });
  const period = "from=2026-03-05&to=2026-03-05";

  it("the Usage page downloads the period: owners get the project, developers their own keys", async () => {
    const usage = await (await html(owner, "/dashboard/usage")).text();
    expect(usage).toContain("/dashboard/usage/download?");
    const all = await html(owner, `/dashboard/usage/download?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}`);
    expect(all.status).toBe(200);
    expect(all.headers.get("content-disposition")).toMatch(/attachment; filename="requests-2026-03-05-2026-03-05\.ndjson"/);
    expect(parse(await all.text())).toEqual(sorted(sentA));
    const mine = await html(dev, `/dashboard/usage/download?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}`);
    expect(parse(await mine.text())).toEqual(sorted(sentA.filter((r) => r.apiKeyId === devKeyId)));
    const csv = await html(dev, `/dashboard/usage/download?from=${iso(T0)}&to=${iso(T0 + 3 * HOUR_MS)}&format=csv`);
    expect((await csv.text()).trimEnd().split("\n")).toHaveLength(1 + sentA.filter((r) => r.apiKeyId === devKeyId).length);
  });

  it("the Requests page (linked as 'Requests' in the top navigation) lists time, key, app, model, provider, status and cost", async () => {
    const res = await html(owner, `/dashboard/requests?${period}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toMatch(/<nav class="nav"[^>]*>[\s\S]*<a href="\/dashboard\/requests[^"]*"[^>]*>Requests<\/a>/);
    for (const h of ["Time", "Key", "App", "Model", "Provider", "Status", "Latency", "Tokens", "Cost", "Cache", "Error"]) expect(page).toContain(`<th scope="col"${h === "Latency" || h === "Tokens" || h === "Cost" ? ' class="num"' : ""}>${h}</th>`);
    const newest = sorted(sentA).reverse();
    const rowIds = [...page.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]);
    expect(rowIds).toEqual(newest.slice(0, 50).map((r) => r.id));
    const first = page.slice(page.indexOf(`data-log-id="${newest[0]!.id}"`));
    const cells = first.slice(0, first.indexOf("</tr>"));
    expect(cells).toContain("test key");
    // The page shows the app by its display name ("unknown" reads "Unknown").
    expect(cells).toContain(appDisplayName(newest[0]!.sourceApp));
    expect(cells).toContain(newest[0]!.usedModel!);
    expect(cells).toContain(newest[0]!.usedProvider!);
    expect(cells).toContain(`>${newest[0]!.statusCode}<`);
    expect(cells).toContain("$0.000000059"); // 59,000 pico
    // Paging: the next page goes on where this one stopped.
    const next = /href="(\/dashboard\/requests\?[^"]+)" rel="next"/.exec(page)![1]!.replace(/&amp;/g, "&");
    const page2 = await (await html(owner, next)).text();
    expect([...page2.matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1])).toEqual(newest.slice(50).map((r) => r.id));
    expect(page2).not.toContain('rel="next"');
  });

  it("filters by key, model, provider and status; developers see only their own keys", async () => {
    const ids = async (s: Session, q: string) => [...(await (await html(s, `/dashboard/requests?${period}&${q}`)).text()).matchAll(/<tr data-log-id="([^"]+)"/g)].map((m) => m[1]).sort();
    const expectIds = (f: (r: LogRecord) => boolean) => sentA.filter(f).map((r) => r.id).sort();
    expect(await ids(owner, `key=${devKeyId}`)).toEqual(expectIds((r) => r.apiKeyId === devKeyId));
    expect(await ids(owner, "model=claude-sonnet-4&status=error")).toEqual(expectIds((r) => r.usedModel === "claude-sonnet-4" && r.statusCode >= 400));
    expect(await ids(owner, "provider=openai&status=ok")).toEqual(expectIds((r) => r.usedProvider === "openai" && r.statusCode < 400));
    expect(await ids(dev, "")).toEqual(expectIds((r) => r.apiKeyId === devKeyId));
  });

  it("a request's detail view shows its metadata and routing attempts, within the session's scope only", async () => {
    const r = sentA.find((x) => x.apiKeyId === a.keyId)!;
    const res = await html(owner, `/dashboard/requests/${r.id}?at=${r.createdAt}`);
    const page = await res.text();
    expect(page).toContain(r.requestId);
    expect(page).toContain("Timeline and routing attempts");
    expect(page).toContain("credits");
    expect(page).toContain(`&quot;note&quot;: &quot;${(r.extra as { note: string }).note}&quot;`);
    // A developer cannot open the owner's request; another organization's session neither.
    expect(await (await html(dev, `/dashboard/requests/${r.id}?at=${r.createdAt}`)).text()).toContain("No such request");
    const other = await signIn(b.ownerEmail, b.ownerPassword);
    expect(await (await html(other, `/dashboard/requests/${r.id}?at=${r.createdAt}`)).text()).toContain("No such request");
  });

  it("recent requests come from the D1 window", async () => {
    const now = Date.now();
    const recent = Array.from({ length: 3 }, (_, i) => row(a, a.keyId, now - (i + 1) * 60_000, i + 100));
    await applyRows(recent);
    const page = await (await html(owner, "/dashboard/requests")).text();
    for (const r of recent) expect(page).toContain(`data-log-id="${r.id}"`);
    expect(page).toContain("from the gateway&#39;s request log");
  });
});

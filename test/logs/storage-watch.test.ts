/**
 * D1's size watched (docs/scale.md, "D1 size watched"): above 80% of D1_SIZE_LIMIT_BYTES the
 * operator gets one e-mail a day; above 90% the window's bound on rows halves and the trim applies
 * it; below 80% the configured bound is back. `GET /` shows the size and the limit.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, seedOrg } from "../helpers/fixtures";
import { captureMail, sent } from "../helpers/mail";
import { incoming, sampleRows } from "../helpers/logs";
import { applyLogRecords } from "../../src/usage/log-consumer";
import { trimWindow } from "../../src/usage/retention";
import { copyOldRows } from "../../src/usage/upgrade";
import { d1Size, watchStorage } from "../../src/usage/storage-watch";
import { effectiveWindowRows } from "../../src/usage/window";
import { HOUR_MS } from "../../src/usage/aggregate";
import type { Env } from "../../src/env";

captureMail();

/** An Env whose D1 limit puts the database at `ratio` of it. */
async function at(ratio: number, rows = "400"): Promise<Env> {
  const size = (await d1Size(env.DB))!;
  const vars = { D1_SIZE_LIMIT_BYTES: String(Math.floor(size / ratio)), OPERATOR_EMAIL: "ops@example.test", REQUEST_LOG_WINDOW_ROWS: rows };
  return Object.create(env, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { value: v }]))) as Env;
}

const windowRowsOf = async (orgId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM request_logs WHERE organization_id = ?").bind(orgId).first<{ n: number }>())!.n;

describe("D1 size watched", () => {
  it("below 80%: nothing; above 80%: one e-mail to the operator a day, the window as configured", async () => {
    const now = Date.now();
    expect(await watchStorage(await at(0.5), now)).toBeNull();
    expect(sent).toHaveLength(0);
    const high = await at(0.85);
    const alert = await watchStorage(high, now);
    expect(alert).toMatchObject({ windowRows: 400 });
    expect(sent.map((m) => m.to)).toEqual(["ops@example.test"]);
    expect(sent[0]!.raw).toMatch(/^Subject: Switchboard: D1 database at 8\d\.\d% of its limit/m);
    expect(await effectiveWindowRows(high)).toBe(400);
    // The next minutes' runs do not send it again; a day later they do.
    await watchStorage(high, now + 60_000);
    expect(sent).toHaveLength(1);
    await watchStorage(high, now + 86_400_000);
    expect(sent).toHaveLength(2);
  });

  it("above 90% the window shrinks itself and the trim applies it; below 80% the configured bound is back", async () => {
    const now = Date.now();
    await copyOldRows(env, now - 2 * HOUR_MS);
    const org = await seedOrg();
    const records = sampleRows(org, [org.keyId], 300, now - 50 * 60_000, 40 * 60_000).map((r) => incoming(r));
    const full = await at(0.95);
    await applyLogRecords(full, records, now);
    expect(await windowRowsOf(org.orgId)).toBe(300);

    expect((await watchStorage(full, now))?.windowRows).toBe(200);
    // Halved at most every 10 minutes, down to 100 rows.
    expect((await watchStorage(full, now + 60_000))?.windowRows).toBe(200);
    await trimWindow(full, now + 60_000);
    expect(await windowRowsOf(org.orgId)).toBe(200);
    expect((await watchStorage(full, now + 11 * 60_000))?.windowRows).toBe(100);
    await trimWindow(full, now + 11 * 60_000);
    expect(await windowRowsOf(org.orgId)).toBe(100);
    expect((await watchStorage(full, now + 22 * 60_000))?.windowRows).toBe(100);

    const roomy = await at(0.5);
    expect(await watchStorage(roomy, now + 23 * 60_000)).toBeNull();
    expect(await effectiveWindowRows(roomy)).toBe(400);
  });

  it("GET / shows the database's size and limit", async () => {
    const res = await call("/");
    const body = (await res.json()) as { health: { database: { sizeBytes: number; limitBytes: number } } };
    expect(body.health.database.sizeBytes).toBeGreaterThan(0);
    expect(body.health.database.limitBytes).toBe(10_000_000_000);
  });
});

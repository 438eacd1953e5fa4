/**
 * A key at its spend limit does not look healthy: both key APIs carry
 * `limitState` (spent / limit / left per limit, reached, when the window resets), and the Keys
 * page shows "limit reached" instead of the green "active" badge, while requests with the key
 * answer 401 `usage_limit_reached`.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, sleep } from "../resilience/helpers";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { signIn, type Session } from "../dashboard/session";
import type { KeyLimitState } from "../../src/keys/limit-state";

interface Listed {
  id: string;
  status: string;
  usage: string | null;
  periodEndsAt: string | null;
  limitState: KeyLimitState | null;
}

async function masterList(org: SeededOrg): Promise<Listed[]> {
  const res = await call(`/v1/master/keys?projectId=${org.projectId}`, { key: org.masterKey });
  expect(res.status).toBe(200);
  return ((await res.json()) as { apiKeys: Listed[] }).apiKeys;
}

async function sessionList(s: Session, org: SeededOrg): Promise<Listed[]> {
  const res = await call(`/api/keys?projectId=${org.projectId}`, { headers: { cookie: s.cookie } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { apiKeys: Listed[] }).apiKeys;
}

/** Polls a list until the key's settled usage reached D1. */
async function listedWhen(list: () => Promise<Listed[]>, id: string, usage: string): Promise<Listed> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const k = (await list()).find((x) => x.id === id)!;
    if (k.usage === usage || Date.now() > deadline) return k;
    await sleep(50);
  }
}

const rowOf = (html: string, id: string): string => html.split("<tr data-key-id=").find((r) => r.startsWith(`"${id}"`))!;
const cell = (row: string, label: string): string => row.slice(row.indexOf(`data-label="${label}"`)).split("</td>")[0]!;

describe("limit state of a key", () => {
  it("a key at its all-time limit: 401 on use, limitState.reached in the master and session APIs, 'limit reached' on the Keys page", async () => {
    const org = await seedOrg();
    const capped = await addKey(org, { description: "capped", usageLimit: "0.000005" });
    const windowed = await addKey(org, { description: "windowed", periodUsageLimit: "0.000003", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    await keyStateStub(env, capped.row.id).settle(null, 6_000_000n);
    await keyStateStub(env, windowed.row.id).settle(null, 3_000_000n);

    const refused = await chat(capped.token, { model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("usage_limit_reached");
    const windowRefused = await chat(windowed.token, { model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    expect(windowRefused.status).toBe(401);

    // One key, live from its object.
    const detail = await call(`/v1/master/keys/${capped.row.id}`, { key: org.masterKey });
    const one = ((await detail.json()) as { apiKey: Listed }).apiKey;
    expect(one.status).toBe("active");
    expect(one.limitState).toEqual({ reached: true, allTime: { limit: "0.000005", spent: "0.000006", remaining: "0", reached: true }, recurring: null });

    const w = ((await (await call(`/v1/master/keys/${windowed.row.id}`, { key: org.masterKey })).json()) as { apiKey: Listed }).apiKey;
    expect(w.limitState).toMatchObject({ reached: true, allTime: null, recurring: { limit: "0.000003", spent: "0.000003", remaining: "0", reached: true } });
    expect(w.limitState!.recurring!.resetsAt).toBe(w.periodEndsAt);
    expect(Date.parse(w.limitState!.recurring!.resetsAt!)).toBeGreaterThan(Date.now());

    // The lists (settled figures from D1), master and session alike.
    const listedCapped = await listedWhen(() => masterList(org), capped.row.id, "0.000006");
    expect(listedCapped.limitState).toEqual(one.limitState);
    expect((await listedWhen(() => masterList(org), windowed.row.id, "0.000003")).limitState).toEqual(w.limitState);
    const healthy = (await masterList(org)).find((k) => k.id === org.keyId)!;
    expect(healthy.limitState).toEqual({ reached: false, allTime: null, recurring: null });
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    expect((await sessionList(s, org)).find((k) => k.id === capped.row.id)!.limitState).toEqual(one.limitState);

    // The Keys page: not the green badge, the spend against the limit, and when the window resets.
    const html = await (await call("/dashboard/keys", { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    const cappedRow = rowOf(html, capped.row.id);
    expect(cell(cappedRow, "Status")).toContain("limit reached");
    expect(cell(cappedRow, "Status")).not.toContain("badge ok");
    expect(cell(cappedRow, "All-time")).toContain("limit reached");
    const windowedRow = rowOf(html, windowed.row.id);
    expect(cell(windowedRow, "Status")).toContain("limit reached");
    expect(cell(windowedRow, "Recurring")).toMatch(/limit reached.*resets/s);
    const healthyRow = rowOf(html, org.keyId);
    expect(cell(healthyRow, "Status")).toContain("badge ok");
    expect(healthyRow).not.toContain("limit reached");
  });

  it("raising the limit clears the state", async () => {
    const org = await seedOrg();
    const k = await addKey(org, { usageLimit: "0.000001" });
    await keyStateStub(env, k.row.id).settle(null, 1_000_000n);
    const patched = await call(`/v1/master/keys/${k.row.id}`, { method: "PATCH", key: org.masterKey, body: JSON.stringify({ usageLimit: "1" }) });
    expect(patched.status).toBe(200);
    const body = ((await patched.json()) as { apiKey: Listed }).apiKey;
    expect(body.limitState).toEqual({ reached: false, allTime: { limit: "1", spent: "0.000001", remaining: "0.999999", reached: false }, recurring: null });
  });
});

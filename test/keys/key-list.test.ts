/**
 * Key lists (`GET /v1/master/keys`, `GET /api/keys`) read every key's settled spend from D1 in the
 * list's own query: no KeyState call however many keys, and the figures are those of the keys'
 * objects once settled. A single key (`GET /v1/master/keys/{id}`) still reads its object live.
 * Keys without figures in D1 (created before `key_spend`) cost a bounded number of object calls.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { withKeyStateCount } from "../helpers/do-calls";
import { chat, settledSpend, sleep, waitForLogs } from "../resilience/helpers";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { formatUsd } from "../../src/billing/money";
import { UNREPORTED_READS_PER_LIST } from "../../src/keys/spend";
import { signIn } from "../dashboard/session";

interface ListedKey {
  id: string;
  usage?: string | null;
  periodUsage?: string | null;
  periodStartedAt?: string | null;
  periodEndsAt?: string | null;
  [k: string]: unknown;
}

const N = 30;

async function masterList(org: SeededOrg): Promise<{ keys: ListedKey[]; calls: number }> {
  const { res, keyStateCalls } = await withKeyStateCount(`/v1/master/keys?projectId=${org.projectId}`, { key: org.masterKey });
  expect(res.status).toBe(200);
  return { keys: ((await res.json()) as { apiKeys: ListedKey[] }).apiKeys, calls: keyStateCalls };
}

async function listed(org: SeededOrg, keyId: string): Promise<ListedKey> {
  const item = (await masterList(org)).keys.find((k) => k.id === keyId);
  expect(item, keyId).toBeDefined();
  return item!;
}

/** Polls the list until the key's listed usage is `usage` (settlements reach D1 after a short lag). */
async function listedWhen(org: SeededOrg, keyId: string, usage: string | null, timeoutMs = 5_000): Promise<ListedKey> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const item = await listed(org, keyId);
    if (item.usage === usage || Date.now() > deadline) return item;
    await sleep(50);
  }
}

/** A chat request that succeeds; returns its request id. */
const chatOk = async (token: string, content: string): Promise<string> => {
  const res = await chat(token, { model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content }] }, { "x-no-cache": "true" });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers.get("x-request-id")!;
};

describe("key lists read settled spend from D1", () => {
  it(`GET /v1/master/keys and GET /api/keys list ${N} keys without one KeyState call, each with its settled spend`, async () => {
    const org = await seedOrg();
    const limited = await addKey(org, { description: "limited", usageLimit: "10" });
    const windowed = await addKey(org, { description: "windowed", periodUsageLimit: "5", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    for (let i = 0; i < N - 3; i++) await addKey(org, { description: `idle ${i}` });

    const requests = [await chatOk(org.key, "one"), await chatOk(limited.token, "two"), await chatOk(limited.token, "three"), await chatOk(windowed.token, "four")];
    expect(await waitForLogs(requests)).toHaveLength(4);
    const used = [org.keyId, limited.row.id, windowed.row.id];
    for (const id of used) expect((await settledSpend(id)).usage).toBeGreaterThan(0n);

    // The exact live read of one key: its object, once.
    const details = new Map<string, ListedKey>();
    for (const id of used) {
      const { res, keyStateCalls } = await withKeyStateCount(`/v1/master/keys/${id}`, { key: org.masterKey });
      expect(res.status).toBe(200);
      expect(keyStateCalls).toBe(1);
      details.set(id, ((await res.json()) as { apiKey: ListedKey }).apiKey);
    }
    expect(details.get(windowed.row.id)!.periodStartedAt).not.toBeNull();

    const { keys, calls } = await masterList(org);
    expect(calls).toBe(0);
    expect(keys.length).toBeGreaterThanOrEqual(N);
    // Settled (logs in D1, as settledSpend waited for): the list says what the object says.
    for (const id of used) expect(keys.find((k) => k.id === id)).toEqual(details.get(id));
    for (const k of keys.filter((k) => !used.includes(k.id))) {
      expect(k).toMatchObject({ usage: "0", periodUsage: "0", periodStartedAt: null, periodEndsAt: null });
    }

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const session = await withKeyStateCount(`/api/keys?projectId=${org.projectId}`, { headers: { cookie: s.cookie } });
    expect(session.res.status).toBe(200);
    expect(session.keyStateCalls).toBe(0);
    const sessionKeys = ((await session.res.json()) as { apiKeys: ListedKey[] }).apiKeys;
    expect(sessionKeys).toEqual((await masterList(org)).keys);
  });

  it("spend settled without a log row (images, moderations) and refunds reach the list too", async () => {
    const org = await seedOrg();
    const stub = keyStateStub(env, org.keyId);
    await stub.settle(null, 2_500_000n);
    expect((await listedWhen(org, org.keyId, formatUsd(2_500_000n))).usage).toBe(formatUsd(2_500_000n));
    await stub.refund(1_000_000n, Date.now());
    expect((await listedWhen(org, org.keyId, formatUsd(1_500_000n))).usage).toBe(formatUsd(1_500_000n));
    expect((await stub.getSpend()).usage).toBe(1_500_000n);
  });

  it("a recurring window that has ended lists nothing spent in it, as the object would; a key without a window lists 0", async () => {
    const org = await seedOrg();
    const k = await addKey(org, { periodUsageLimit: "5", periodUsageDurationValue: 1, periodUsageDurationUnit: "hour" });
    await keyStateStub(env, k.row.id).settle(null, 7_000_000n);
    const live = await listedWhen(org, k.row.id, formatUsd(7_000_000n));
    expect(live).toMatchObject({ usage: formatUsd(7_000_000n), periodUsage: formatUsd(7_000_000n) });
    expect(Date.parse(live.periodEndsAt!) - Date.parse(live.periodStartedAt!)).toBe(3_600_000);

    await env.DB.prepare("UPDATE key_spend SET period_started_at = ? WHERE api_key_id = ?").bind(Date.now() - 2 * 3_600_000, k.row.id).run();
    expect(await listed(org, k.row.id)).toMatchObject({ usage: formatUsd(7_000_000n), periodUsage: "0", periodStartedAt: null, periodEndsAt: null });

    await keyStateStub(env, org.keyId).settle(null, 3_000_000n);
    expect(await listedWhen(org, org.keyId, formatUsd(3_000_000n))).toMatchObject({ periodUsage: "0", periodStartedAt: null, periodEndsAt: null });
  });

  it(`keys whose figures never reached D1 (created before they were kept there) are read from their objects, at most ${UNREPORTED_READS_PER_LIST} per list, once`, async () => {
    const org = await seedOrg();
    await keyStateStub(env, org.keyId).settle(null, 4_000_000n);
    await listedWhen(org, org.keyId, formatUsd(4_000_000n));
    const extra = UNREPORTED_READS_PER_LIST + 4;
    for (let i = 0; i < extra; i++) await addKey(org, { description: `old ${i}` });
    // As a key created before key_spend existed: its object has the figures, D1 has no row.
    const deleted = await env.DB.prepare("DELETE FROM key_spend WHERE api_key_id IN (SELECT id FROM api_keys WHERE project_id = ?)").bind(org.projectId).run();
    const unreported = deleted.meta.changes;
    expect(unreported).toBeGreaterThan(extra);

    const first = await masterList(org);
    expect(first.calls).toBe(UNREPORTED_READS_PER_LIST);
    expect(first.keys.filter((k) => k.usage === null)).toHaveLength(unreported - UNREPORTED_READS_PER_LIST);
    for (const k of first.keys.filter((k) => k.usage === null)) expect(k).toMatchObject({ periodUsage: null, periodStartedAt: null, periodEndsAt: null });

    const second = await masterList(org);
    expect(second.calls).toBe(unreported - UNREPORTED_READS_PER_LIST);
    expect(second.keys.filter((k) => k.usage === null)).toEqual([]);
    expect(second.keys.find((k) => k.id === org.keyId)).toMatchObject({ usage: formatUsd(4_000_000n), periodUsage: "0" });

    const third = await masterList(org);
    expect(third.calls).toBe(0);
    expect(third.keys).toEqual(second.keys);
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { parseUsd } from "../../src/billing/money";

const chat = (key: string, i: number) =>
  call("/v1/chat/completions", {
    method: "POST",
    key,
    headers: { "content-type": "application/json", "x-no-cache": "true" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 3, messages: [{ role: "user", content: `hi ${i}` }] }),
  });

/** Settlement runs in waitUntil: wait until no reservation is outstanding. */
async function settled(keyId: string) {
  const stub = keyStateStub(env, keyId);
  for (let i = 0; i < 100; i++) {
    const s = await stub.getSpend();
    if (s.reserved === 0n) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("reservations never settled");
}

describe("spend limits through POST /v1/chat/completions", () => {
  it("50 simultaneous requests against a limit covering 10: spend <= limit + one request; raising the limit recovers", async () => {
    const org = await seedOrg();
    // One request to learn the per-request cost.
    const probe = await addKey(org);
    const first = await chat(probe.token, 0);
    expect(first.status).toBe(200);
    const cost = parseUsd(String(((await first.json()) as { usage: { cost: number } }).usage.cost.toFixed(12)));
    expect(cost).toBeGreaterThan(0n);

    const limit = 10n * cost;
    const limitText = (Number(limit) / 1e12).toFixed(12);
    const { token, row } = await addKey(org, { usageLimit: limitText });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(token, i + 1)));
    const statuses = results.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(ok).toBeLessThanOrEqual(11);
    expect(statuses.every((s) => s === 200 || s === 401)).toBe(true);
    const denied = results.find((r) => r.status === 401)!;
    const err = ((await denied.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("usage_limit_reached");
    expect(err.message).toContain("all-time limit");
    await Promise.all(results.filter((r) => r !== denied).map((r) => r.text()));

    const spend = await settled(row.id);
    expect(spend.usage).toBeLessThanOrEqual(parseUsd(limitText) + cost);

    // Exhaust the rest of the limit, then raise it: the key recovers immediately.
    for (let i = 0; i < 15; i++) {
      const r = await chat(token, 100 + i);
      await r.text();
      if (r.status === 401) break;
      await settled(row.id);
    }
    expect((await chat(token, 200)).status).toBe(401);
    const patched = await call(`/v1/master/keys/${row.id}`, { method: "PATCH", key: org.masterKey, ...json({ usageLimit: "1" }) });
    expect(patched.status).toBe(200);
    expect((await chat(token, 201)).status).toBe(200);
  });
});

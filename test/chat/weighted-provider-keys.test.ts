/**
 * Several provider keys per provider: spread by weight, and a key answering 401, 403, 429 or 5xx gives way to
 * another key of the same provider within the request (and is avoided by the next requests).
 * Keys point at the fake upstream under their own path prefix, so a provider-scoped directive
 * (`[[fake@deepinfra-a:status=429]]`) fails one key only.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, setProject, user } from "./helpers";
import { resetKeyHealth } from "../../src/routing/key-choice";

const MODEL = "deepinfra/llama-3.3-70b-instruct";
type Body = Record<string, any>;
const upstream = (prefix: string) => `${(env as unknown as { FAKE_UPSTREAM_URL: string }).FAKE_UPSTREAM_URL}/${prefix}`;

async function addKey(org: SeededOrg, body: Record<string, unknown>): Promise<string> {
  const res = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "deepinfra", token: `tok-${crypto.randomUUID()}`, ...body }) });
  expect(res.status).toBe(201);
  const view = ((await res.json()) as Body).providerKey;
  expect(view).toMatchObject({ weight: body.weight ?? 1 });
  return view.id as string;
}

async function byokOrg(): Promise<SeededOrg> {
  const org = await seedOrg();
  await setProject(org.projectId, { mode: "api-keys" });
  return org;
}

beforeEach(() => resetKeyHealth());

describe("several keys per provider", () => {
  it("spreads requests by weight (3:1)", async () => {
    const org = await byokOrg();
    const heavy = await addKey(org, { weight: 3, baseUrl: upstream("deepinfra-a") });
    const light = await addKey(org, { weight: 1, baseUrl: upstream("deepinfra-b") });
    const counts = new Map<string, number>();
    const N = 120;
    for (let i = 0; i < N; i++) {
      const res = await chat(org.key, { model: MODEL, messages: user(`hi ${i}`) }, { "x-no-cache": "true" });
      expect(res.status).toBe(200);
      const id = ((await res.json()) as Body).metadata.routing[0].providerKeyId as string;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const share = (counts.get(heavy) ?? 0) / N;
    // Expected 0.75; sd of the share is 0.04 at N = 120, so 0.15 is beyond 3.5 sd.
    expect(share).toBeGreaterThan(0.6);
    expect(share).toBeLessThan(0.9);
    expect((counts.get(light) ?? 0) + (counts.get(heavy) ?? 0)).toBe(N);
  });

  it("a key answering 429 is skipped for another key of the same provider, then avoided", async () => {
    const org = await byokOrg();
    const failing = await addKey(org, { weight: 1, baseUrl: upstream("deepinfra-a") });
    const healthy = await addKey(org, { weight: 1, baseUrl: upstream("deepinfra-b") });
    let sawRetry = false;
    for (let i = 0; i < 12 && !sawRetry; i++) {
      const res = await chat(org.key, { model: MODEL, messages: user(`x ${i} [[fake@deepinfra-a:status=429]]`) }, { "x-no-cache": "true" });
      expect(res.status).toBe(200);
      const routing = ((await res.json()) as Body).metadata.routing as Body[];
      expect(routing.length).toBeLessThanOrEqual(2);
      if (routing.length === 2) {
        sawRetry = true;
        expect(routing[0]).toMatchObject({ provider: "deepinfra", providerKeyId: failing, status_code: 429, succeeded: false });
        expect(routing[1]).toMatchObject({ provider: "deepinfra", providerKeyId: healthy, succeeded: true });
      } else {
        expect(routing[0]).toMatchObject({ providerKeyId: healthy });
      }
    }
    expect(sawRetry).toBe(true);
    // Remembered: the next requests start on the healthy key.
    for (let i = 0; i < 6; i++) {
      const res = await chat(org.key, { model: MODEL, messages: user(`y ${i}`) }, { "x-no-cache": "true" });
      expect(((await res.json()) as Body).metadata.routing).toEqual([expect.objectContaining({ providerKeyId: healthy })]);
    }
  });

  it("a key answering 401, 403 or 5xx gives way to another key of the same provider too", async () => {
    for (const status of [401, 403, 503]) {
      resetKeyHealth();
      const org = await byokOrg();
      const failing = await addKey(org, { baseUrl: upstream("deepinfra-a") });
      const healthy = await addKey(org, { baseUrl: upstream("deepinfra-b") });
      let retried: Body[] | null = null;
      for (let i = 0; i < 12 && !retried; i++) {
        const res = await chat(org.key, { model: MODEL, messages: user(`s${status} ${i} [[fake@deepinfra-a:status=${status}]]`) }, { "x-no-cache": "true" });
        expect(res.status, `status ${status}`).toBe(200);
        const routing = ((await res.json()) as Body).metadata.routing as Body[];
        if (routing.length === 2) retried = routing;
      }
      expect(retried, `status ${status}`).toEqual([
        expect.objectContaining({ provider: "deepinfra", providerKeyId: failing, status_code: status, succeeded: false }),
        expect.objectContaining({ provider: "deepinfra", providerKeyId: healthy, succeeded: true }),
      ]);
    }
  });

  it("when every key of the provider fails, the request moves on to another provider", async () => {
    const org = await seedOrg(); // hybrid: other providers serve on the operator's credentials
    await addKey(org, { baseUrl: upstream("deepinfra-a") });
    await addKey(org, { baseUrl: upstream("deepinfra-b") });
    const res = await chat(org.key, { model: "llama-3.3-70b-instruct", messages: user(`z [[fake@deepinfra-a:status=401]] [[fake@deepinfra-b:status=401]]`) }, { "x-no-cache": "true" });
    expect(res.status).toBe(200);
    const routing = ((await res.json()) as Body).metadata.routing as Body[];
    expect(routing.map((r) => [r.provider, r.credentialSource, r.succeeded])).toEqual([
      ["deepinfra", "byok", false],
      ["deepinfra", "byok", false],
      [expect.not.stringMatching(/^deepinfra$/), "credits", true],
    ]);
  });

  it("weight and region are validated and editable", async () => {
    const org = await byokOrg();
    const bad = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "deepinfra", token: "t", weight: 0 }) });
    expect(bad.status).toBe(400);
    const id = await addKey(org, { region: "eu-central-1" });
    const patched = await call(`/v1/master/provider-keys/${id}`, { method: "PATCH", key: org.masterKey, ...json({ weight: 5, region: null }) });
    expect(((await patched.json()) as Body).providerKey).toMatchObject({ weight: 5, region: null });
  });
});

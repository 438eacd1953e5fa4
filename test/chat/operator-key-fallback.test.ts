/**
 * Hybrid projects that allow it fall back from the organization's own provider keys to the
 * operator's (billed to credits) once every own key of the provider failed; the project setting
 * `operatorKeyFallback` (master API) is off by default. The organization's key has its own base URL
 * (a path of the fake upstream of its own), so a fault can hit it and not the operator's endpoint.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, resetMetrics, setProject, user, waitForLog } from "./helpers";

const MODEL = "deepinfra/llama-3.3-70b-instruct";
const OWN = `${(env as unknown as { FAKE_UPSTREAM_URL: string }).FAKE_UPSTREAM_URL}/deepinfra-own`;
type Body = Record<string, any>;

beforeEach(resetMetrics);

async function orgWithOwnKey(opts: { creditsUsd?: number } = {}): Promise<SeededOrg & { providerKeyId: string }> {
  const org = await seedOrg(opts);
  const res = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "deepinfra", token: "tok-own-deepinfra", baseUrl: OWN }) });
  expect(res.status).toBe(201);
  const body = (await res.json()) as Body;
  return { ...org, providerKeyId: body.providerKey?.id ?? body.id };
}

const patchProject = async (org: SeededOrg, body: Record<string, unknown>): Promise<Response> =>
  call(`/v1/master/projects/${org.projectId}`, { method: "PATCH", key: org.masterKey, ...json(body) });

const ask = (org: SeededOrg, directive: string) =>
  chat(org.key, { model: MODEL, messages: user(`hi ${crypto.randomUUID()} ${directive}`) }, { "x-no-cache": "true" });

describe("hybrid fallback to the operator's keys", () => {
  it("is a project setting of the master API, off by default, validated", async () => {
    const org = await orgWithOwnKey();
    const got = (await (await call(`/v1/master/projects/${org.projectId}`, { key: org.masterKey })).json()) as Body;
    expect((got.project ?? got).operatorKeyFallback).toBe(false);
    const bad = await patchProject(org, { operatorKeyFallback: "yes" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error.message).toMatch(/operatorKeyFallback/);
    const ok = await patchProject(org, { operatorKeyFallback: true });
    expect(ok.status).toBe(200);
    expect((((await ok.json()) as Body).project ?? {}).operatorKeyFallback).toBe(true);
  });

  it("after the organization's own key answers 429, the operator's key serves the request, billed to credits", async () => {
    const org = await orgWithOwnKey();
    expect((await patchProject(org, { operatorKeyFallback: true })).status).toBe(200);
    const res = await ask(org, "[[fake@deepinfra-own:status=429]]");
    const body = (await res.json()) as Body;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.metadata.routing).toEqual([
      expect.objectContaining({ provider: "deepinfra", credentialSource: "byok", status_code: 429, succeeded: false }),
      expect.objectContaining({ provider: "deepinfra", credentialSource: "credits", succeeded: true }),
    ]);
    expect(body.metadata.routing[1].providerKeyId).toBeUndefined();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.creditsCostPico).toBeGreaterThan(0);
    expect(log.byokCostPico).toBe(0);
  });

  it("without the setting, the own key's failure is the answer (no credits spent)", async () => {
    const org = await orgWithOwnKey();
    const res = await ask(org, "[[fake@deepinfra-own:status=429]]");
    const body = (await res.json()) as Body;
    expect(res.status).toBe(429);
    expect(body.error.code).toBe("upstream_rate_limited");
  });

  it("only in hybrid mode: an api-keys project never spends credits", async () => {
    const org = await orgWithOwnKey();
    await setProject(org.projectId, { mode: "api-keys" });
    expect((await patchProject(org, { operatorKeyFallback: true })).status).toBe(200);
    const res = await ask(org, "[[fake@deepinfra-own:status=503]]");
    expect(res.status).toBe(502);
  });

  it("an organization without credits keeps the own key's failure", async () => {
    const org = await orgWithOwnKey({ creditsUsd: 0 });
    expect((await patchProject(org, { operatorKeyFallback: true })).status).toBe(200);
    const res = await ask(org, "[[fake@deepinfra-own:status=503]]");
    expect(res.status).toBe(502);
    expect(((await res.json()) as Body).metadata?.routing ?? []).not.toEqual(expect.arrayContaining([expect.objectContaining({ credentialSource: "credits" })]));
  });
});

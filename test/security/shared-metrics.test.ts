/**
 * The public provider metrics show only the public catalogue, and an organization's own
 * upstreams (custom providers, BYOK keys with their own base URL) never move the shared metrics
 * that route everyone's traffic.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg } from "../helpers/fixtures";
import { chat, resetMetrics, user } from "../chat/helpers";

type Body = Record<string, any>;
const MODEL = "llama-3.3-70b-instruct";

beforeEach(resetMetrics);

const metrics = async (): Promise<Body[]> => ((await (await call("/v1/providers/metrics")).json()) as Body).data as Body[];

describe("shared provider metrics", () => {
  it("GET /v1/providers/metrics lists no organization's custom provider or model", async () => {
    const org = await seedOrg();
    const name = `acme${crypto.randomUUID().slice(0, 6)}`;
    const m = (path: string, body: unknown) => call(`/v1/master${path}`, { method: "POST", key: org.masterKey, ...json(body) });
    expect((await m("/custom-providers", { name, baseUrl: `${env.FAKE_UPSTREAM_URL}/${name}`, token: "cp-token-123456" })).status).toBe(201);
    expect((await m("/custom-models", { providerName: name, modelId: "secret-model" })).status).toBe(201);
    expect((await chat(org.key, { model: `${name}/secret-model`, messages: user("hi") })).status).toBe(200);
    expect((await chat(org.key, { model: MODEL, messages: user("hi") })).status).toBe(200);
    const rows = await metrics();
    expect(rows.some((r) => r.provider === "deepinfra")).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(name);
    expect(JSON.stringify(rows)).not.toContain("secret-model");
  });

  it("a BYOK key with its own base URL failing does not lower the shared provider's uptime", async () => {
    const org = await seedOrg();
    const pk = await call("/v1/master/provider-keys", {
      method: "POST",
      key: org.masterKey,
      ...json({ provider: "deepinfra", token: "byok-own-endpoint", baseUrl: `${env.FAKE_UPSTREAM_URL}/deepinfra` }),
    });
    expect(pk.status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const res = await chat(org.key, { model: `deepinfra/${MODEL}`, messages: user(`x${i} [[fake@deepinfra:status=500]]`) }, { "x-no-fallback": "true" });
      expect(res.status).toBeGreaterThanOrEqual(500);
    }
    const row = (await metrics()).find((r) => r.provider === "deepinfra" && r.model === MODEL);
    expect(row?.errors ?? 0).toBe(0);
    // Everyone else still starts on deepinfra.
    const other = await seedOrg();
    const body = (await (await chat(other.key, { model: MODEL, messages: user("hi") })).json()) as Body;
    expect(body.metadata.used_provider).toBe("deepinfra");
  });
});

describe("organization upstreams never follow redirects", () => {
  it("a custom provider answering 307 is an upstream error, the redirect target is never called", async () => {
    const org = await seedOrg();
    const name = `redir${crypto.randomUUID().slice(0, 6)}`;
    const m = (path: string, body: unknown) => call(`/v1/master${path}`, { method: "POST", key: org.masterKey, ...json(body) });
    expect((await m("/custom-providers", { name, baseUrl: `${env.FAKE_UPSTREAM_URL}/${name}`, token: "cp-token-123456" })).status).toBe(201);
    expect((await m("/custom-models", { providerName: name, modelId: "m1" })).status).toBe(201);
    const res = await chat(org.key, { model: `${name}/m1`, messages: user(`hi [[fake@${name}:redirect]]`) });
    const text = await res.text();
    expect(res.status, text).toBeGreaterThanOrEqual(500);
    expect(text).toMatch(/redirect/);
  });
});

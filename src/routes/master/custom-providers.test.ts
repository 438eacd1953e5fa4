import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../app";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
interface ProviderBody {
  customProvider: { id: string; name: string; baseUrl: string; tokenHint: string };
}

/** The Worker as deployed: ENVIRONMENT=production turns the SSRF guard on. */
async function callProduction(path: string, masterKey: string, body: unknown): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`https://gw.test${path}`, { method: "POST", headers: { authorization: `Bearer ${masterKey}`, "content-type": "application/json" }, body: JSON.stringify(body) }),
    { ...env, ENVIRONMENT: "production" },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("master API: custom providers", () => {
  it("creates, lists, renames and deletes; token never returned; contexts refreshed", async () => {
    const org = await seedOrg();
    const token = "custom-upstream-secret-9876";
    const res = await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json({ name: "acme", baseUrl: `${env.FAKE_UPSTREAM_URL}/openai/`, token }) });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(token);
    const { customProvider } = JSON.parse(text) as ProviderBody;
    expect(customProvider).toMatchObject({ name: "acme", baseUrl: `${env.FAKE_UPSTREAM_URL}/openai`, tokenHint: "…9876" });
    expect((await checkKey(env, await resolveGatewayKey(env, org.key))).customProviders.map((p) => p.name)).toEqual(["acme"]);

    expect((await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json({ name: "acme", baseUrl: "https://x.example", token: "t" }) })).status).toBe(409);

    await call("/v1/master/custom-models", { method: "POST", key: org.masterKey, ...json({ providerName: "acme", modelId: "m1" }) });
    // An empty PATCH is a 400, as for keys and provider keys, not a silent no-op.
    const empty = await call(`/v1/master/custom-providers/${customProvider.id}`, { method: "PATCH", key: org.masterKey, ...json({}) });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("nothing to update");
    const renamed = await call(`/v1/master/custom-providers/${customProvider.id}`, { method: "PATCH", key: org.masterKey, ...json({ name: "acme-2" }) });
    expect(renamed.status).toBe(200);
    expect(((await renamed.json()) as ProviderBody).customProvider.name).toBe("acme-2");
    const models = (await (await call("/v1/master/custom-models", { key: org.masterKey })).json()) as { customModels: Array<{ model: string }> };
    expect(models.customModels.map((m) => m.model)).toEqual(["acme-2/m1"]);

    const list = await (await call("/v1/master/custom-providers", { key: org.masterKey })).text();
    expect(list).not.toContain(token);

    expect((await call(`/v1/master/custom-providers/${customProvider.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    const ctx = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(ctx.customProviders).toEqual([]);
    expect(ctx.customModels).toEqual([]);
  });

  it("validates names (pattern, built-in ids) and URLs with 400 + param", async () => {
    const org = await seedOrg();
    for (const [body, param] of [
      [{ name: "Acme", baseUrl: "https://x.example", token: "t" }, "name"],
      [{ name: "-acme", baseUrl: "https://x.example", token: "t" }, "name"],
      [{ name: "openai", baseUrl: "https://x.example", token: "t" }, "name"],
      [{ name: "acme", baseUrl: "not a url", token: "t" }, "baseUrl"],
      [{ name: "acme", baseUrl: "https://x.example", token: "" }, "token"],
    ] as const) {
      const res = await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as ErrorBody).error.param).toBe(param);
    }
  });

  it("refuses private, loopback and metadata hosts (and plain http) in production", async () => {
    const org = await seedOrg();
    for (const baseUrl of [
      "https://127.0.0.1/v1",
      "https://2130706433/v1",
      "https://0x7f.0.0.1/v1",
      "https://[::ffff:127.0.0.1]/v1",
      "https://169.254.169.254/",
      "https://10.1.2.3/",
      "https://[fd00::1]/",
      "https://localhost:8443/",
      "http://api.example.com/v1",
    ]) {
      const res = await callProduction("/v1/master/custom-providers", org.masterKey, { name: "evil", baseUrl, token: "t" });
      expect(res.status, baseUrl).toBe(400);
      expect(((await res.json()) as ErrorBody).error.param).toBe("baseUrl");
    }
    const ok = await callProduction("/v1/master/custom-providers", org.masterKey, { name: "public", baseUrl: "https://api.example.com/v1", token: "t" });
    expect(ok.status).toBe(201);
  });

  it("hides other organizations' providers", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const { customProvider } = (await (await call("/v1/master/custom-providers", { method: "POST", key: other.masterKey, ...json({ name: "theirs", baseUrl: "https://x.example", token: "t" }) })).json()) as ProviderBody;
    expect((await call(`/v1/master/custom-providers/${customProvider.id}`, { method: "PATCH", key: org.masterKey, ...json({ token: "mine" }) })).status).toBe(404);
    expect((await call(`/v1/master/custom-providers/${customProvider.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";

interface ErrorBody {
  error: { param: string | null; code: string };
}
interface ModelBody {
  customModel: { id: string; model: string; name: string | null; pricing: Record<string, string>; contextLength: number | null; capabilities: Record<string, boolean> };
}

describe("master API: custom models", () => {
  it("creates, updates and deletes models of an existing custom provider", async () => {
    const org = await seedOrg();
    await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json({ name: "acme", baseUrl: "https://llm.acme.example/v1", token: "t" }) });
    const res = await call("/v1/master/custom-models", {
      method: "POST",
      key: org.masterKey,
      ...json({ providerName: "acme", modelId: "llama-70b", name: "Llama", pricing: { prompt: "0.0000005", completion: "0.000001" }, contextLength: 8192, capabilities: { streaming: true, tools: false } }),
    });
    expect(res.status).toBe(201);
    const { customModel } = (await res.json()) as ModelBody;
    expect(customModel).toMatchObject({ model: "acme/llama-70b", name: "Llama", pricing: { prompt: "0.0000005", completion: "0.000001" }, contextLength: 8192, capabilities: { streaming: true, tools: false } });
    expect((await checkKey(env, await resolveGatewayKey(env, org.key))).customModels.map((m) => m.modelId)).toEqual(["llama-70b"]);

    const dup = await call("/v1/master/custom-models", { method: "POST", key: org.masterKey, ...json({ providerName: "acme", modelId: "llama-70b" }) });
    expect(dup.status).toBe(409);

    const empty = await call(`/v1/master/custom-models/${customModel.id}`, { method: "PATCH", key: org.masterKey, ...json({}) });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("nothing to update");
    const patched = await call(`/v1/master/custom-models/${customModel.id}`, { method: "PATCH", key: org.masterKey, ...json({ contextLength: null, pricing: { prompt: "0" } }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as ModelBody).customModel).toMatchObject({ contextLength: null, pricing: { prompt: "0" } });
    expect((await checkKey(env, await resolveGatewayKey(env, org.key))).customModels[0]!.contextLength).toBeNull();

    expect((await call(`/v1/master/custom-models/${customModel.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    expect((await checkKey(env, await resolveGatewayKey(env, org.key))).customModels).toEqual([]);
  });

  it("validates with 400 + param and hides other organizations' models", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json({ name: "acme", baseUrl: "https://llm.acme.example/v1", token: "t" }) });
    await call("/v1/master/custom-providers", { method: "POST", key: other.masterKey, ...json({ name: "acme", baseUrl: "https://llm.acme.example/v1", token: "t" }) });
    for (const [body, param] of [
      [{ providerName: "nope", modelId: "m" }, "providerName"],
      [{ providerName: "acme" }, "modelId"],
      [{ providerName: "acme", modelId: "m", pricing: { prompt: "1e-6" } }, "pricing.prompt"],
      [{ providerName: "acme", modelId: "m", pricing: { prompt: "-1" } }, "pricing.prompt"],
      [{ providerName: "acme", modelId: "m", contextLength: 0 }, "contextLength"],
      [{ providerName: "acme", modelId: "m", capabilities: { tools: "yes" } }, "capabilities.tools"],
    ] as const) {
      const res = await call("/v1/master/custom-models", { method: "POST", key: org.masterKey, ...json(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as ErrorBody).error.param).toBe(param);
    }
    const theirs = (await (await call("/v1/master/custom-models", { method: "POST", key: other.masterKey, ...json({ providerName: "acme", modelId: "m" }) })).json()) as ModelBody;
    expect((await call(`/v1/master/custom-models/${theirs.customModel.id}`, { method: "PATCH", key: org.masterKey, ...json({ name: "x" }) })).status).toBe(404);
    expect((await call(`/v1/master/custom-models/${theirs.customModel.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
  });
});

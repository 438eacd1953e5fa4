import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";
import { getDb } from "../../db/client";
import { providerKeys } from "../../db/schema";
import { decryptSecret } from "../../lib/crypto";

interface ProviderKeyBody {
  providerKey: { id: string; provider: string; label: string | null; baseUrl: string | null; tokenHint: string };
}

describe("master API: provider keys", () => {
  it("stores the token encrypted, never returns it, and reaches warm key contexts", async () => {
    const org = await seedOrg();
    const warm = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(warm.providerKeys).toEqual([]);
    const token = "sk-org-own-secret-token-1234";
    const res = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token, label: "prod" }) });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(token);
    const { providerKey } = JSON.parse(text) as ProviderKeyBody;
    expect(providerKey).toMatchObject({ provider: "openai", label: "prod", baseUrl: null, tokenHint: "…1234" });

    const row = await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.id, providerKey.id)).get();
    expect(row!.tokenCiphertext).not.toContain(token);
    expect(await decryptSecret(env.KEY_HASH_SECRET!, row!.tokenCiphertext)).toBe(token);

    const fresh = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(fresh.providerKeys.map((k) => k.id)).toEqual([providerKey.id]);

    const list = await (await call("/v1/master/provider-keys", { key: org.masterKey })).text();
    expect(list).not.toContain(token);
    expect(JSON.parse(list)).toMatchObject({ providerKeys: [{ id: providerKey.id }] });

    const del = await call(`/v1/master/provider-keys/${providerKey.id}`, { method: "DELETE", key: org.masterKey });
    expect(del.status).toBe(200);
    expect((await checkKey(env, await resolveGatewayKey(env, org.key))).providerKeys).toEqual([]);
    expect((await call(`/v1/master/provider-keys/${providerKey.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
  });

  it("rejects unknown providers and bad base URLs; hides other organizations' keys", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const bad = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openia", token: "x" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("provider");
    const url = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token: "x", baseUrl: "ftp://x" }) });
    expect(url.status).toBe(400);
    expect(((await url.json()) as { error: { param: string } }).error.param).toBe("baseUrl");

    const theirs = (await (await call("/v1/master/provider-keys", { method: "POST", key: other.masterKey, ...json({ provider: "anthropic", token: "sk-ant-xyz-0000" }) })).json()) as ProviderKeyBody;
    expect((await call(`/v1/master/provider-keys/${theirs.providerKey.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
    expect(((await (await call("/v1/master/provider-keys", { key: org.masterKey })).json()) as { providerKeys: unknown[] }).providerKeys).toEqual([]);
  });
});

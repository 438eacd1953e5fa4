import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { app } from "../../app";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";
import { getDb } from "../../db/client";
import { providerKeys } from "../../db/schema";
import { decryptSecret } from "../../lib/crypto";
import { recorded } from "../../../test/helpers/recorded";

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

/** The Authorization headers the fake upstream received for requests tagged `[[tag:<tag>]]`. */
async function sentAuthorization(tag: string): Promise<string[]> {
  return (await recorded(tag)).map((r) => r.headers.authorization ?? "");
}

const chatTagged = (key: string, tag: string) =>
  call("/v1/chat/completions", { method: "POST", key, ...json({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `hello [[tag:${tag}]]` }] }) });

async function callProduction(path: string, masterKey: string, method: string, body: unknown): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`https://gw.test${path}`, { method, headers: { authorization: `Bearer ${masterKey}`, "content-type": "application/json" }, body: JSON.stringify(body) }),
    { ...env, ENVIRONMENT: "production" },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("master API: editing a provider key (PATCH /v1/master/provider-keys/{id})", () => {
  it("rotates the token in place: hint recomputed, stored encrypted, never returned, used by the very next request", async () => {
    const org = await seedOrg();
    const first = "sk-byok-first-token-aaaa1111";
    const created = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token: first, label: "prod" }) });
    const { providerKey } = (await created.json()) as ProviderKeyBody;
    const tag = crypto.randomUUID().slice(0, 8);

    // Warm every per-isolate cache with the first token (key context, decrypted secret).
    const warm = await chatTagged(org.key, `pk-edit-a-${tag}`);
    expect(warm.status).toBe(200);
    expect(await sentAuthorization(`pk-edit-a-${tag}`)).toEqual([`Bearer ${first}`]);

    const second = "sk-byok-second-token-bbbb2222";
    const res = await call(`/v1/master/provider-keys/${providerKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ token: second }) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(second);
    expect(text).not.toContain(first);
    expect((JSON.parse(text) as ProviderKeyBody).providerKey).toMatchObject({ id: providerKey.id, provider: "openai", label: "prod", baseUrl: null, tokenHint: "…2222" });

    const row = await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.id, providerKey.id)).get();
    expect(row!.tokenCiphertext).not.toContain(second);
    expect(await decryptSecret(env.KEY_HASH_SECRET!, row!.tokenCiphertext)).toBe(second);

    const next = await chatTagged(org.key, `pk-edit-b-${tag}`);
    const body = (await next.json()) as { metadata: { routing: Array<{ credentialSource: string; providerKeyId: string; error_type?: string }> } };
    expect(next.status).toBe(200);
    expect(body.metadata.routing[0]).toMatchObject({ credentialSource: "byok", providerKeyId: providerKey.id });
    const sent = await sentAuthorization(`pk-edit-b-${tag}`);
    // The answer comes from the new token. An early call (docs/admission.md) may have started
    // under this isolate's older context before admission answered with the new version: it was
    // cancelled, nothing of it was served, and it is in the request's routing as early_cancelled.
    expect(sent.at(-1)).toBe(`Bearer ${second}`);
    if (sent.length > 1) {
      expect(sent).toEqual([`Bearer ${first}`, `Bearer ${second}`]);
      expect(body.metadata.routing.map((a) => a.error_type ?? null)).toEqual(["early_cancelled", null]);
    }

    // Base URL and label: set, then cleared with null; the token is kept.
    const moved = await call(`/v1/master/provider-keys/${providerKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ baseUrl: `${env.FAKE_UPSTREAM_URL}/openai`, label: null }) });
    expect(((await moved.json()) as ProviderKeyBody).providerKey).toMatchObject({ baseUrl: `${env.FAKE_UPSTREAM_URL}/openai`, label: null, tokenHint: "…2222" });
    expect((await chatTagged(org.key, `pk-edit-c-${tag}`)).status).toBe(200);
    // The token is kept (an early call under the older context, if any, used the same token).
    expect(new Set(await sentAuthorization(`pk-edit-c-${tag}`))).toEqual(new Set([`Bearer ${second}`]));
    const cleared = await call(`/v1/master/provider-keys/${providerKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ baseUrl: null }) });
    expect(((await cleared.json()) as ProviderKeyBody).providerKey.baseUrl).toBeNull();
  });

  it("validates like create: empty body, unknown fields, bad values and SSRF are 400; other organizations' keys 404", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const mine = (await (await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token: "sk-mine-0000" }) })).json()) as ProviderKeyBody;
    const path = `/v1/master/provider-keys/${mine.providerKey.id}`;
    for (const [body, param] of [
      [{}, null],
      [{ provider: "anthropic" }, "provider"],
      [{ token: "sk-x-1234", secret: "x" }, "secret"],
      [{ token: "" }, "token"],
      [{ token: null }, "token"],
      [{ baseUrl: "ftp://x" }, "baseUrl"],
      [{ label: "" }, "label"],
    ] as const) {
      const res = await call(path, { method: "PATCH", key: org.masterKey, ...json(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { param: string | null } }).error.param, JSON.stringify(body)).toBe(param);
    }
    for (const baseUrl of ["https://127.0.0.1/v1", "https://169.254.169.254/", "https://[::ffff:10.0.0.1]/", "http://api.example.com/v1"]) {
      const res = await callProduction(path, org.masterKey, "PATCH", { baseUrl });
      expect(res.status, baseUrl).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe("baseUrl");
    }
    expect((await callProduction(path, org.masterKey, "PATCH", { baseUrl: "https://api.example.com/v1" })).status).toBe(200);

    const theirs = (await (await call("/v1/master/provider-keys", { method: "POST", key: other.masterKey, ...json({ provider: "openai", token: "sk-theirs-9999" }) })).json()) as ProviderKeyBody;
    const stolen = await call(`/v1/master/provider-keys/${theirs.providerKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ token: "sk-stolen-0000" }) });
    expect(stolen.status).toBe(404);
    expect((await call("/v1/master/provider-keys/pk_missing", { method: "PATCH", key: org.masterKey, ...json({ token: "sk-x-0000" }) })).status).toBe(404);
    const row = await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.id, theirs.providerKey.id)).get();
    expect(row!.tokenHint).toBe("…9999");
  });
});

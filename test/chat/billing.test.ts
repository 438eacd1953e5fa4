import { beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { seedOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { providerKeys } from "../../src/db/schema";
import { encryptSecret } from "../../src/lib/crypto";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { bumpKeyVersions } from "../../src/keys/sync";
import { TEST_SECRETS } from "../helpers/secrets";
import { chat, resetMetrics, setProject, user, waitForLog } from "./helpers";
import { recorded } from "../helpers/recorded";

type Body = Record<string, any>;
beforeEach(resetMetrics);

async function addProviderKey(orgId: string, provider: string, token: string, label: string): Promise<string> {
  const id = `pk_${crypto.randomUUID().slice(0, 12)}`;
  await getDb(env.DB).insert(providerKeys).values({
    id,
    organizationId: orgId,
    provider,
    label,
    tokenCiphertext: await encryptSecret(TEST_SECRETS.KEY_HASH_SECRET, token),
    tokenHint: "…" + token.slice(-4),
  });
  await bumpKeyVersions(env, { organizationId: orgId });
  return id;
}

describe("credits and BYOK", () => {
  it("answers 402 for credit-paid requests when the organization has no credits", async () => {
    const org = await seedOrg({ creditsUsd: 0 });
    await setProject(org.projectId, { mode: "credits" });
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("no money") });
    expect(res.status).toBe(402);
    const body = (await res.json()) as Body;
    expect(body.error.code).toBe("insufficient_credits");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(402);
  });

  it("uses the organization's own provider key in hybrid mode even without credits, billed as BYOK", async () => {
    const org = await seedOrg({ creditsUsd: 0 });
    const pkId = await addProviderKey(org.orgId, "openai", "sk-byok-openai-1234", "team key");
    const res = await chat(org.key, { model: "openai/gpt-4o-mini", messages: user("byok [[tag:byok-hybrid]]") });
    const body = (await res.json()) as Body;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.metadata.routing[0]).toMatchObject({ credentialSource: "byok", providerKeyId: pkId, providerKeyLabel: "team key" });
    const sent = await recorded("byok-hybrid");
    expect(sent[0]!.headers.authorization).toBe("Bearer sk-byok-openai-1234");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.byokCostPico).toBeGreaterThan(0);
    expect(log.creditsCostPico).toBe(0);
  });

  it("api-keys mode without a provider key for the model is a 400 naming the fix", async () => {
    const org = await seedOrg();
    await setProject(org.projectId, { mode: "api-keys" });
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("x") });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Body).error.message).toMatch(/provider key/);
  });

  it("settles the real cost against the key's spend", async () => {
    const org = await seedOrg();
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("spend [[fake:words=50]]") });
    const body = (await res.json()) as Body;
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.costPico).toBe(Math.round(body.usage.cost * 1e12));
    const deadline = Date.now() + 3000;
    let spend = await keyStateStub(env, org.keyId).getSpend();
    while (spend.usage === 0n && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      spend = await keyStateStub(env, org.keyId).getSpend();
    }
    expect(spend.usage).toBe(BigInt(log.costPico));
    expect(spend.reserved).toBe(0n);
  });
});

describe("client disconnect mid-stream", () => {
  it("still writes a complete log row and bills what was generated", async () => {
    const org = await seedOrg();
    const res = await chat(org.key, { model: "gpt-4o-mini", stream: true, messages: user("long [[fake:words=40,drip=50]]") });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.read();
    await reader.cancel();
    const log = await waitForLog(res.headers.get("x-request-id")!, 8000);
    expect(log.clientAborted).toBe(true);
    expect(log.streamed).toBe(true);
    expect(log.completionTokens).toBeGreaterThan(0);
    expect(log.costPico).toBeGreaterThan(0);
    expect(log.usedProvider).toBe("openai");
  });
});

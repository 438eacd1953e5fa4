/**
 * `<ID>_API_KEY` (contract section 1): a provider without the operator's credential is unavailable
 * for credit-paid requests. A model none of whose providers has one is refused (503
 * provider_unavailable, nothing sent upstream); a model with other providers is served by them;
 * the organization's own provider key still serves it.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { call, json, seedOrg } from "../helpers/fixtures";
import { findModel } from "../../src/catalog";
import { providerEnvPrefix } from "../../src/env";

type Body = Record<string, any>;

/** The app with the operator's credentials of `providers` removed. */
async function chatWithout(providers: readonly string[], key: string, body: Record<string, unknown>): Promise<Response> {
  const vars: Record<string, unknown> = { ...env };
  for (const p of providers) vars[`${providerEnvPrefix(p)}_API_KEY`] = undefined;
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request("http://gw.test/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" }, body: JSON.stringify(body) }),
    vars as unknown as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("operator credentials (<ID>_API_KEY)", () => {
  it("a provider without one serves no credit-paid request; the organization's own key still does", async () => {
    const org = await seedOrg();
    const gpt = findModel("gpt-4o-mini")!.mappings.map((m) => m.providerId);
    const none = await chatWithout(gpt, org.key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    expect(none.status).toBe(503);
    expect(((await none.json()) as Body).error.code).toBe("provider_unavailable");

    const llama = "llama-3.3-70b-instruct";
    for (let i = 0; i < 3; i++) {
      const res = await chatWithout(["deepinfra", "nebius"], org.key, { model: llama, messages: [{ role: "user", content: `hi ${i}` }] });
      expect(res.status).toBe(200);
      const routing = ((await res.json()) as Body).metadata.routing as Body[];
      expect(routing.map((r) => r.provider)).not.toContain("deepinfra");
      expect(routing.map((r) => r.provider)).not.toContain("nebius");
    }

    const own = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "openai", token: "sk-own-0123456789abcdef" }) });
    expect(own.status).toBe(201);
    const byok = await chatWithout(gpt, org.key, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    expect(byok.status).toBe(200);
    expect(((await byok.json()) as Body).metadata.routing.at(-1)).toMatchObject({ provider: "openai", credentialSource: "byok", succeeded: true });
  });
});

/**
 * How old the rules of an early upstream call may be (src/context/policy-freshness.ts,
 * docs/admission.md): a deny rule (provider, model) is added while this isolate holds a confirmed
 * context of the key (the change made elsewhere: the isolate keeps its cached context). With the
 * freshness bound (shortened here through POLICY_FRESHNESS_MS instead of waiting 30 s), the
 * upstream sees nothing of a request that starts more than the bound after the change returned;
 * in strict mode (`compliance.strictPolicy`) nothing of any request after the change. Both answer
 * the refusal exactly as a request that started under the new rules.
 */
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { cacheContext, clearKeyCache, getCachedContext } from "../../src/auth/key-cache";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { cancelledEarlyCalls } from "../../src/billing/early-call";
import { sleep } from "../resilience/helpers";
import { chatVia, far, latencies, recorded, say, send } from "./helpers";

/** The bound in these tests: long enough for the warm-up to stay confirmed, short enough to wait out. */
const WINDOW_MS = 1_500;
const bounded = Object.create(far, { POLICY_FRESHNESS_MS: { value: String(WINDOW_MS), enumerable: true } }) as Env;

const PINNED = "openai/gpt-4o-mini";

const RULES = [
  { kind: "provider", rule: { ruleType: "deny_providers", ruleValue: { providers: ["openai"] } } },
  { kind: "model", rule: { ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } } },
] as const;

/** A key that has been served under `e` (its context cached and confirmed in this isolate). */
async function warmKey(e: Env, strict = false) {
  const org = await seedOrg();
  if (strict) {
    const r = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ compliance: { strictPolicy: true } }) });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { organization: { compliance: { strictPolicy?: boolean } } }).organization.compliance.strictPolicy).toBe(true);
  }
  const { token, row } = await addKey(org);
  for (let i = 0; i < 2; i++) {
    const { res, done } = chatVia(token, { model: PINNED, ...say(`warm ${i}`) }, { env: e });
    expect((await res).status).toBe(200);
    await done;
  }
  const fingerprint = (await resolveGatewayKey(e, token)).key.fingerprint;
  const cached = getCachedContext(fingerprint);
  expect(cached).toBeDefined();
  return { org, token, row, fingerprint, cached: cached! };
}

/** Adds the rule through the master API, as another isolate would: this one keeps its cached context. */
async function addRule(k: Awaited<ReturnType<typeof warmKey>>, rule: Record<string, unknown>): Promise<void> {
  const r = await call(`/v1/master/keys/${k.row.id}/iam`, { method: "POST", key: k.org.masterKey, ...json(rule) });
  expect(r.status).toBe(201);
  cacheContext(k.fingerprint, k.cached);
}

/** The key's request after the change: its answer and what of it reached the upstream. */
async function after(k: { token: string }, e: Env, label: string) {
  const tag = `${label}-${crypto.randomUUID().slice(0, 8)}`;
  const { res, done } = chatVia(k.token, { model: PINNED, ...say(`after the rule [[tag:${tag}]]`) }, { env: e });
  const r = await res;
  const answer = { status: r.status, body: (await r.json()) as unknown };
  await done;
  return { answer, upstream: await recorded(tag) };
}

/** The answer of a request that started under the new rules (a cold isolate: no early call). */
async function plainAnswer(k: { token: string }) {
  clearKeyCache();
  const { res, done } = chatVia(k.token, { model: PINNED, ...say("after the rule") });
  const r = await res;
  const answer = { status: r.status, body: (await r.json()) as unknown };
  await done;
  return answer;
}

describe("policy freshness: a deny rule keeps the prompt away from the upstream", () => {
  it.each(RULES)("deny $kind: a request starting more than the bound after the change sends nothing upstream", async ({ rule }) => {
    latencies();
    const k = await warmKey(bounded);
    await addRule(k, rule);
    // The change returned; wait the bound out (the warm-up's confirmation is older than it then).
    await sleep(WINDOW_MS + 300);
    const cancelledBefore = cancelledEarlyCalls();
    const { answer, upstream } = await after(k, bounded, "bound");
    expect(upstream).toBe(0);
    expect(cancelledEarlyCalls() - cancelledBefore).toBe(0);
    expect(answer.status).toBe(403);
    expect(answer).toEqual(await plainAnswer(k));
  });

  it.each(RULES)("deny $kind in strict mode: no request after the change sends anything upstream", async ({ rule }) => {
    latencies();
    // Without strict mode the same request, right after the change, is the one call the bound
    // lets out under the old rules (cancelled, never answered from): what strict mode removes.
    const loose = await warmKey(far);
    await addRule(loose, rule);
    const control = await after(loose, far, "loose");
    expect(control.answer.status).toBe(403);
    expect(control.upstream).toBe(1);

    const k = await warmKey(far, true);
    await addRule(k, rule);
    const { answer, upstream } = await after(k, far, "strict");
    expect(upstream).toBe(0);
    expect(answer).toEqual(control.answer);
    expect(answer).toEqual(await plainAnswer(k));
  });

  it.each([
    { door: "embeddings", path: "/v1/embeddings", provider: "openai", body: (t: string) => ({ model: "text-embedding-3-small", input: t }) },
    { door: "images", path: "/v1/images/generations", provider: "openai", body: (t: string) => ({ model: "gpt-image-1", prompt: t }) },
    { door: "moderations", path: "/v1/moderations", provider: "mistral", body: (t: string) => ({ model: "mistral-moderation-latest", input: t }) },
    { door: "messages", path: "/v1/messages", provider: "openai", body: (t: string) => ({ model: PINNED, max_tokens: 5, messages: [{ role: "user", content: t }] }) },
  ])("$door: a request starting more than the bound after a deny rule sends nothing upstream", async ({ path, provider, body }) => {
    latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    for (let i = 0; i < 2; i++) {
      const { res, done } = send(path, token, body(`warm ${i}`), { env: bounded });
      expect((await res).status).toBe(200);
      await done;
    }
    const fingerprint = (await resolveGatewayKey(bounded, token)).key.fingerprint;
    const cached = getCachedContext(fingerprint)!;
    await addRule({ org, token, row, fingerprint, cached }, { ruleType: "deny_providers", ruleValue: { providers: [provider] } });
    await sleep(WINDOW_MS + 300);
    const tag = `door-${crypto.randomUUID().slice(0, 8)}`;
    const { res, done } = send(path, token, body(`after the rule [[tag:${tag}]]`), { env: bounded });
    const r = await res;
    await r.text();
    await done;
    expect(await recorded(tag)).toBe(0);
    expect(r.status).toBe(403);
  });

  it("strict mode serves allowed requests as before, with the call after admission", async () => {
    latencies();
    const k = await warmKey(far, true);
    const cancelledBefore = cancelledEarlyCalls();
    const { res, done } = chatVia(k.token, { model: PINNED, stream: true, ...say("strict stream") });
    const r = await res;
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("data: [DONE]");
    await done;
    expect(cancelledEarlyCalls() - cancelledBefore).toBe(0);
  });
});

/**
 * Caller routing preferences (`provider`, `models`) on the three chat doors, field by field, and
 * the project's default preferences. llama-3.3-70b-instruct is served by seven OpenAI-compatible
 * providers; deepinfra is the cheapest (first choice), nebius the runner-up.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, readSse, resetMetrics, setProject, user, waitForLog } from "./helpers";
import { PROVIDERS } from "../../src/catalog/providers";
import { findModel } from "../../src/catalog";

const MODEL = "llama-3.3-70b-instruct";
type Body = Record<string, any>;

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const ask = async (provider: Record<string, unknown>, text = "hi", extra: Record<string, unknown> = {}) => {
  const res = await chat(org.key, { model: MODEL, messages: user(`${text} ${crypto.randomUUID()}`), provider, ...extra }, { "x-no-cache": "true" });
  return { res, body: (await res.json()) as Body };
};
const providersTried = (body: Body): string[] => body.metadata.routing.map((r: Body) => r.provider);

describe("provider preferences on /v1/chat/completions", () => {
  it("an unknown field inside provider is a 400 naming it", async () => {
    const { res, body } = await ask({ orderr: ["groq"] });
    expect(res.status).toBe(400);
    expect(body.error.param).toMatch(/^provider/);
    expect(body.error.message).toContain("orderr");
  });

  it("an unknown provider id is a 400", async () => {
    const { res, body } = await ask({ only: ["opneai"] });
    expect(res.status).toBe(400);
    expect(body.error.message).toMatch(/unknown provider id/);
  });

  it("only keeps the listed providers; ignore drops them", async () => {
    expect((await ask({ only: ["nebius", "novita"] })).body.metadata.used_provider).toBe("nebius");
    expect((await ask({ ignore: ["deepinfra"] })).body.metadata.used_provider).toBe("nebius");
  });

  it("order is tried first, in order, then the rest as failover", async () => {
    const { body } = await ask({ order: ["groq", "fireworks"] }, "x [[fake@groq:status=500]]");
    expect(providersTried(body)).toEqual(["groq", "fireworks"]);
    const all = await ask({ order: ["groq", "fireworks"] }, "x [[fake@groq:status=500]] [[fake@fireworks:status=500]]");
    expect(providersTried(all.body)).toEqual(["groq", "fireworks", "deepinfra"]);
  });

  it("allow_fallbacks: false stops after the order (and without an order after the first choice)", async () => {
    const { res } = await ask({ order: ["groq"], allow_fallbacks: false }, "x [[fake@groq:status=500]]");
    expect(res.status).toBe(502);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing.map((r) => r.provider)).toEqual(["groq"]);
    const first = await ask({ allow_fallbacks: false }, "x [[fake@deepinfra:status=500]]");
    expect(first.res.status).toBe(502);
  });

  it("sort: price ranks by price alone", async () => {
    const { body } = await ask({ sort: "price" }, "x [[fake@deepinfra:status=500]] [[fake@nebius:status=500]]");
    expect(providersTried(body)).toEqual(["deepinfra", "nebius", "novita"]);
  });

  it("max_price drops dearer mappings; nothing left is 400 no_provider_available naming why", async () => {
    expect((await ask({ max_price: { prompt: 0.12, completion: 1 } })).body.metadata.used_provider).toBe("deepinfra");
    const tight = await ask({ order: ["groq"], max_price: { prompt: 0.5 } });
    expect(tight.body.metadata.used_provider).not.toBe("groq");
    const none = await ask({ max_price: { prompt: 0.05 } });
    expect(none.res.status).toBe(400);
    expect(none.body.error.code).toBe("no_provider_available");
    expect(none.body.error.message).toContain("max_price.prompt");
  });

  it("data_collection: deny keeps only providers that do not train on API data", async () => {
    const model = findModel("deepseek-v3.2")!;
    const trainers = model.mappings.filter((m) => PROVIDERS[m.providerId].trainsOnApiData).map((m) => m.providerId);
    expect(trainers.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      const res = await chat(org.key, { model: model.id, messages: user(`hi ${i}`), provider: { data_collection: "deny" } }, { "x-no-cache": "true" });
      const body = (await res.json()) as Body;
      expect(res.status).toBe(200);
      expect(trainers).not.toContain(body.metadata.used_provider);
    }
    const only = await chat(org.key, { model: model.id, messages: user("hi"), provider: { only: trainers, data_collection: "deny" } });
    expect(only.status).toBe(400);
    expect(((await only.json()) as Body).error.message).toContain("data_collection");
  });

  it("require_parameters keeps only mappings that carry every parameter sent", async () => {
    const dropping = findModel(MODEL)!.mappings.filter((m) => PROVIDERS[m.providerId].quirks?.unsupportedParams?.includes("logit_bias")).map((m) => m.providerId);
    expect(dropping).toContain("groq");
    const sent = { logit_bias: { "50256": -100 } };
    const strict = await ask({ order: ["groq"], require_parameters: true }, "hi", sent);
    expect(dropping).not.toContain(strict.body.metadata.used_provider);
    // Without it, the ordered provider takes the request and drops the parameter.
    expect((await ask({ order: ["groq"] }, "hi", sent)).body.metadata.used_provider).toBe("groq");
    const none = await ask({ only: dropping, require_parameters: true }, "hi", sent);
    expect(none.res.status).toBe(400);
    expect(none.body.error.message).toContain("'logit_bias'");
  });

  it("preferences never widen IAM: a denied provider stays denied when the request asks for it", async () => {
    const o = await seedOrg();
    const rule = await call(`/v1/master/keys/${o.keyId}/iam`, { method: "POST", key: o.masterKey, ...json({ ruleType: "deny_providers", ruleValue: { providers: ["nebius"] } }) });
    expect(rule.status).toBe(201);
    const res = await chat(o.key, { model: MODEL, messages: user("hi"), provider: { only: ["nebius"] } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Body).error.message).toContain("deny_providers");
  });
});

describe("fallback models (models)", () => {
  it("tries the next model when every provider of the first failed, and answers under its id", async () => {
    const res = await chat(org.key, { model: `groq/${MODEL}`, models: ["gpt-4o-mini"], messages: user("x [[fake@groq:status=500]]") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.metadata.routing).toEqual([
      expect.objectContaining({ provider: "groq", model: MODEL, succeeded: false }),
      expect.objectContaining({ model: "gpt-4o-mini", succeeded: true }),
    ]);
  });

  it("a refusal of the first model's provider (4xx) moves on to the next model", async () => {
    const res = await chat(org.key, { model: `groq/${MODEL}`, models: ["gpt-4o-mini"], messages: user("x [[fake@groq:status=400]]") });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).metadata.routing).toHaveLength(2);
  });

  it("a rate limit or a timeout of the first model's provider moves on to the next model too", async () => {
    const limited = await chat(org.key, { model: `groq/${MODEL}`, models: ["gpt-4o-mini"], messages: user(`x ${crypto.randomUUID()} [[fake@groq:status=429]]`) });
    expect(limited.status).toBe(200);
    expect(((await limited.json()) as Body).metadata.routing).toEqual([
      expect.objectContaining({ provider: "groq", status_code: 429, succeeded: false }),
      expect.objectContaining({ model: "gpt-4o-mini", succeeded: true }),
    ]);
    const o = await seedOrg();
    await setProject(o.projectId, { firstByteTimeoutMs: 300 });
    const slow = await chat(o.key, { model: `groq/${MODEL}`, models: ["gpt-4o-mini"], messages: user(`x ${crypto.randomUUID()} [[fake@groq:hang]]`) });
    expect(slow.status).toBe(200);
    expect(((await slow.json()) as Body).metadata.routing).toEqual([
      expect.objectContaining({ provider: "groq", status_code: 504, succeeded: false }),
      expect.objectContaining({ model: "gpt-4o-mini", succeeded: true }),
    ]);
  });

  it("an unknown fallback model is a 400 naming models.<i>", async () => {
    const res = await chat(org.key, { model: MODEL, models: ["no-such-model"], messages: user("hi") });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Body).error.param).toBe("models.0");
  });
});

describe("the project's default preferences", () => {
  it("apply to requests that send none; a request's own provider replaces them", async () => {
    const o = await seedOrg();
    const patch = await call(`/v1/master/projects/${o.projectId}`, { method: "PATCH", key: o.masterKey, ...json({ provider: { only: ["novita"] } }) });
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as Body).project.provider).toEqual({ only: ["novita"] });
    const bad = await call(`/v1/master/projects/${o.projectId}`, { method: "PATCH", key: o.masterKey, ...json({ provider: { sortt: "price" } }) });
    expect(bad.status).toBe(400);

    const send = (extra: Record<string, unknown> = {}) => chat(o.key, { model: MODEL, messages: user(`hi ${crypto.randomUUID()}`), ...extra });
    const byDefault = (await (await send()).json()) as Body;
    expect(byDefault.metadata.used_provider).toBe("novita");
    const own = (await (await send({ provider: { only: ["nebius"] } })).json()) as Body;
    expect(own.metadata.used_provider).toBe("nebius");

    await call(`/v1/master/projects/${o.projectId}`, { method: "PATCH", key: o.masterKey, ...json({ provider: null }) });
    const cleared = (await (await send()).json()) as Body;
    expect(cleared.metadata.used_provider).toBe("deepinfra");
  });
});

describe("Responses and Messages carry provider and models", () => {
  it("/v1/responses: only is applied, a typo is a 400", async () => {
    const ok = await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: MODEL, input: "hi", provider: { only: ["novita"] } }) });
    expect(ok.status).toBe(200);
    expect((await waitForLog(ok.headers.get("x-request-id")!)).usedProvider).toBe("novita");
    const bad = await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: MODEL, input: "hi", provider: { onyl: ["novita"] } }) });
    expect(bad.status).toBe(400);
  });

  it("/v1/responses and /v1/messages: models are tried after model", async () => {
    const fail = `x ${crypto.randomUUID()} [[fake@groq:status=500]]`;
    const doors = [
      call("/v1/responses", { method: "POST", key: org.key, ...json({ model: `groq/${MODEL}`, models: ["gpt-4o-mini"], input: fail }) }),
      call("/v1/messages", { method: "POST", key: org.key, ...json({ model: `groq/${MODEL}`, models: ["gpt-4o-mini"], max_tokens: 50, messages: [{ role: "user", content: fail }] }) }),
    ];
    for (const res of await Promise.all(doors)) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const log = await waitForLog(res.headers.get("x-request-id")!);
      expect(log.routing.map((r) => [r.provider, r.model, r.succeeded])).toEqual([["groq", MODEL, false], ["openai", "gpt-4o-mini", true]]);
    }
  });

  it("/v1/responses and /v1/messages name the fallback model that served, as chat does, streamed or not", async () => {
    const fail = () => `x ${crypto.randomUUID()} [[fake@groq:status=500]]`;
    const base = { model: `groq/${MODEL}`, models: ["gpt-4o-mini"] };
    const responses = (stream: boolean) => call("/v1/responses", { method: "POST", key: org.key, ...json({ ...base, input: fail(), stream }) });
    const messages = (stream: boolean) => call("/v1/messages", { method: "POST", key: org.key, ...json({ ...base, max_tokens: 50, messages: [{ role: "user", content: fail() }], stream }) });
    const logAgrees = async (res: Response) => {
      const log = await waitForLog(res.headers.get("x-request-id")!);
      expect([log.requestedModel, log.usedModel]).toEqual([`groq/${MODEL}`, "gpt-4o-mini"]);
    };

    const r = await responses(false);
    expect(((await r.json()) as Body).model).toBe("gpt-4o-mini");
    await logAgrees(r);
    const m = await messages(false);
    expect(((await m.json()) as Body).model).toBe("gpt-4o-mini");
    await logAgrees(m);

    // Streams: every event that names the model (the response object of each response.* event; message_start).
    const rs = await responses(true);
    const named = (await readSse(rs)).events.flatMap((e) => (e !== "[DONE]" && typeof e.response === "object" ? [(e.response as Body).model] : []));
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(new Set(named)).toEqual(new Set(["gpt-4o-mini"]));
    await logAgrees(rs);
    const ms = await messages(true);
    const start = (await readSse(ms)).events.find((e) => e !== "[DONE]" && e.type === "message_start") as Body;
    expect(start.message.model).toBe("gpt-4o-mini");
    await logAgrees(ms);
  });

  it("/v1/responses and /v1/messages answer under the caller's own spelling when the requested model served", async () => {
    const r = (await (await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: `groq/${MODEL}`, models: ["gpt-4o-mini"], input: "hi", stream: true }) })).text());
    expect(r).toContain(`"model":"groq/${MODEL}"`);
    expect(r).not.toContain(`"model":"gpt-4o-mini"`);
    const m = (await (await call("/v1/messages", { method: "POST", key: org.key, ...json({ model: `groq/${MODEL}`, models: ["gpt-4o-mini"], max_tokens: 50, messages: [{ role: "user", content: "hi" }] }) })).json()) as Body;
    expect(m.model).toBe(`groq/${MODEL}`);
  });

  it("/v1/messages: only is applied, a typo is a 400", async () => {
    const msg = (provider: unknown) => ({ model: MODEL, max_tokens: 50, messages: [{ role: "user", content: "hi" }], provider });
    const ok = await call("/v1/messages", { method: "POST", key: org.key, ...json(msg({ only: ["novita"] })) });
    expect(ok.status).toBe(200);
    expect((await waitForLog(ok.headers.get("x-request-id")!)).usedProvider).toBe("novita");
    const bad = await call("/v1/messages", { method: "POST", key: org.key, ...json(msg({ ignore: "novita" })) });
    expect(bad.status).toBe(400);
  });
});

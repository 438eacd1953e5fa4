/**
 * OpenAI Chat Completions fields beyond the sampling basics (prompt_cache_key, safety_identifier,
 * metadata, store, verbosity, prediction, service_tier, audio, web_search_options): each one is
 * forwarded, refused with a 400, or dropped only where a provider rejects it; never lost silently
 * on the way to an OpenAI-format provider. Asserted on what the fake upstream received.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, resetMetrics, setProject, user, waitForLog } from "./helpers";
import { recorded as recordedRequests } from "../helpers/recorded";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

type Body = Record<string, any>;
const recorded = (tag: string) => recordedRequests<Body>(tag);

/** Every forwarded OpenAI-platform field, with a valid value. */
const PLATFORM_FIELDS = {
  prompt_cache_key: "tenant-42:summaries",
  safety_identifier: "user-hash-0f3a",
  metadata: { team: "search", run: "2025-11-01" },
  store: true,
  verbosity: "low",
  prediction: { type: "content", content: [{ type: "text", text: "const x = 1;" }] },
  service_tier: "default",
} as const;

async function error(res: Response): Promise<{ status: number; param: string | null; message: string; code: string | null }> {
  const body = (await res.json()) as Body;
  return { status: res.status, param: body.error?.param ?? null, message: String(body.error?.message ?? ""), code: body.error?.code ?? null };
}

describe("OpenAI platform fields on /v1/chat/completions", () => {
  it("arrive unchanged at an OpenAI-format provider (OpenAI itself)", async () => {
    const res = await chat(org.key, { model: "openai/gpt-5-mini", messages: user("fields [[tag:fields-openai]]"), ...PLATFORM_FIELDS });
    expect(res.status, await res.clone().text()).toBe(200);
    const sent = (await recorded("fields-openai"))[0]!.body;
    for (const [field, value] of Object.entries(PLATFORM_FIELDS)) expect(sent[field], field).toEqual(value);
  });

  it("accept 'auto' as service_tier and a string prediction", async () => {
    const res = await chat(org.key, {
      model: "openai/gpt-4o-mini",
      messages: user("auto tier [[tag:fields-auto]]"),
      service_tier: "auto",
      prediction: { type: "content", content: "predicted" },
    });
    expect(res.status).toBe(200);
    const sent = (await recorded("fields-auto"))[0]!.body;
    expect(sent.service_tier).toBe("auto");
    expect(sent.prediction).toEqual({ type: "content", content: "predicted" });
  });

  it("are dropped for providers that do not implement them, and the answer still comes back", async () => {
    // Groq and Mistral speak the OpenAI format but reject or ignore these fields; Anthropic's
    // adapter builds its own body. The same request to OpenAI carries them (first assertion).
    const body = { ...PLATFORM_FIELDS, messages: user("elsewhere [[tag:fields-elsewhere]]") };
    for (const model of ["openai/gpt-4o-mini", "groq/llama-3.1-8b-instruct", "mistral/mistral-small-3.2", "anthropic/claude-sonnet-4"]) {
      const res = await chat(org.key, { ...body, model });
      expect(res.status, `${model}: ${await res.clone().text()}`).toBe(200);
    }
    const sent = await recorded("fields-elsewhere");
    expect(sent).toHaveLength(4);
    expect(sent[0]!.body.verbosity).toBe("low");
    for (const r of sent.slice(1)) {
      for (const field of Object.keys(PLATFORM_FIELDS)) expect(r.body[field], `${r.body.model}: ${field}`).toBeUndefined();
    }
  });

  it("malformed values are a 400 naming the field", async () => {
    const bad: Array<[string, unknown]> = [
      ["verbosity", "loud"],
      ["service_tier", "turbo"],
      ["store", "yes"],
      ["prompt_cache_key", 42],
      ["safety_identifier", { id: 1 }],
      ["metadata", { n: 1 }],
      ["metadata", Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]))],
      ["metadata", { ["k".repeat(65)]: "v" }],
      ["prediction", { type: "content" }],
      ["audio", { voice: "alloy", format: "ogg" }],
    ];
    for (const [field, value] of bad) {
      const e = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("bad"), [field]: value }));
      expect(e.status, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(e.param?.split(".")[0], `${field}=${JSON.stringify(value)}`).toBe(field);
    }
  });

  it("refuses service tiers the gateway would bill wrongly, and web search", async () => {
    for (const tier of ["flex", "priority", "scale"]) {
      const e = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("tier [[tag:fields-tier]]"), service_tier: tier }));
      expect(e.status).toBe(400);
      expect(e.param).toBe("service_tier");
      expect(e.code).toBe("unsupported_parameter");
      expect(e.message).toContain(`'${tier}'`);
      expect(e.message).toContain("'auto'");
      expect(e.message).toContain("'default'");
    }
    const search = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("search [[tag:fields-tier]]"), web_search_options: { search_context_size: "low" } }));
    expect(search.status).toBe(400);
    expect(search.param).toBe("web_search_options");
    expect(search.code).toBe("unsupported_parameter");
    expect(search.message).toMatch(/web search/i);
    expect(await recorded("fields-tier")).toHaveLength(0);
  });

  it("audio output needs a mapping that can produce and price it: 400, nothing sent upstream", async () => {
    const audio = { voice: "alloy", format: "wav" };
    const e = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("speak [[tag:fields-audio]]"), modalities: ["text", "audio"], audio }));
    expect(e.status).toBe(400);
    expect(e.message).toContain("audio output");
    // OpenAI requires `audio` with modalities ["audio"]; `audio` alone asks for audio output too.
    const missing = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("speak [[tag:fields-audio]]"), modalities: ["audio"] }));
    expect(missing.status).toBe(400);
    expect(missing.param).toBe("audio");
    const alone = await error(await chat(org.key, { model: "gpt-4o-mini", messages: user("speak [[tag:fields-audio]]"), audio }));
    expect(alone.status).toBe(400);
    expect(alone.message).toContain("audio output");
    expect(await recorded("fields-audio")).toHaveLength(0);
  });
});

describe("response cache and the new fields", () => {
  // The response cache is opt-in per project. Turning it on gives the key a new version: one
  // request first, so no early call of the requests below goes out under the old context.
  beforeAll(async () => {
    await setProject(org.projectId, { cachingEnabled: true });
    await (await chat(org.key, { model: "gpt-4o-mini", messages: user("new project settings") })).text();
  });
  /** Sends `body`, waits for its log row (the cache write is queued before it), returns metadata.cached. */
  async function cached(body: Record<string, unknown>): Promise<boolean> {
    const res = await chat(org.key, body);
    const json = (await res.json()) as Body;
    expect(res.status, JSON.stringify(json)).toBe(200);
    await waitForLog(res.headers.get("x-request-id")!);
    await new Promise((r) => setTimeout(r, 100));
    return json.metadata.cached as boolean;
  }

  it("keys on verbosity (it changes the answer) but not on identifiers, and never serves a stored completion", async () => {
    const base = { model: "gpt-4o-mini", messages: user("cache fields [[tag:fields-cache]]") };
    expect(await cached({ ...base, verbosity: "low", prompt_cache_key: "a", safety_identifier: "u1" })).toBe(false);
    // Another verbosity is another answer: not served from the first one's entry.
    expect(await cached({ ...base, verbosity: "high" })).toBe(false);
    // Routing keys and end-user ids do not change the answer: the first entry serves it.
    expect(await cached({ ...base, verbosity: "low", prompt_cache_key: "b", safety_identifier: "u2" })).toBe(true);
    // store: true asks the provider to keep the completion, so it must reach the provider.
    expect(await cached({ ...base, verbosity: "low", store: true })).toBe(false);
    const sent = await recorded("fields-cache");
    expect(sent.map((r) => r.body.verbosity)).toEqual(["low", "high", "low"]);
    expect(sent[2]!.body.store).toBe(true);
  });
});

describe("dialects carry the fields that map 1:1", () => {
  it("Responses: text.verbosity, prompt_cache_key, safety_identifier, metadata and service_tier reach OpenAI", async () => {
    const res = await call("/v1/responses", {
      method: "POST",
      key: org.key,
      ...json({
        model: "openai/gpt-5-mini",
        input: "responses fields [[tag:fields-responses]]",
        text: { verbosity: "high" },
        prompt_cache_key: "pck",
        safety_identifier: "sid",
        metadata: { a: "b" },
        service_tier: "default",
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const sent = (await recorded("fields-responses"))[0]!.body;
    expect(sent).toMatchObject({ verbosity: "high", prompt_cache_key: "pck", safety_identifier: "sid", metadata: { a: "b" }, service_tier: "default" });
    const echoed = (await res.json()) as Body;
    expect(echoed.text.verbosity).toBe("high");
  });

  it("Responses: a malformed verbosity names text.verbosity; service_tier 'flex' is refused", async () => {
    const bad = await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: "gpt-4o-mini", input: "x", text: { verbosity: "loud" } }) });
    expect((await error(bad)).param).toBe("text.verbosity");
    const flex = await error(await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: "gpt-4o-mini", input: "x", service_tier: "flex" }) }));
    expect(flex.status).toBe(400);
    expect(flex.param).toBe("service_tier");
  });
});

describe("Anthropic Messages service_tier", () => {
  it("is validated and not carried (no Chat Completions tier means the same)", async () => {
    const body = { model: "openai/gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "tier [[tag:fields-messages]]" }] };
    const ok = await call("/v1/messages", { method: "POST", key: org.key, ...json({ ...body, service_tier: "standard_only" }) });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await recorded("fields-messages"))[0]!.body.service_tier).toBeUndefined();
    const bad = await call("/v1/messages", { method: "POST", key: org.key, ...json({ ...body, service_tier: "priority" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error.message).toContain("service_tier");
  });
});

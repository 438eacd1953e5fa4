import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, readSse, resetMetrics, user, waitForLog } from "./helpers";
import { PINNED_MIN_SAMPLES } from "../../src/routing/order";

// llama-3.3-70b-instruct is served by several OpenAI-compatible providers; deepinfra is the
// cheapest (first choice when all are healthy), nebius the runner-up.
const MODEL = "llama-3.3-70b-instruct";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

type Body = Record<string, any>;

/** Enough recent failures on the pinned groq mapping for its uptime to count. */
async function failPinned(times: number) {
  for (let i = 0; i < times; i++) {
    const r = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x [[fake@groq:status=500]]") }, { "x-no-fallback": "true" });
    expect(r.status).toBe(502);
  }
}

describe("smart routing and failover", () => {
  it("starts on the cheapest healthy provider", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("hi") });
    const body = (await res.json()) as Body;
    expect(body.metadata.used_provider).toBe("deepinfra");
  });

  it("skips a failing provider within the request, then starts new requests on the healthy one", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("hi [[fake@deepinfra:status=500]]") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.metadata.routing).toEqual([
      expect.objectContaining({ provider: "deepinfra", status_code: 500, succeeded: false }),
      expect.objectContaining({ provider: "nebius", status_code: 200, succeeded: true }),
    ]);
    expect(body.metadata.used_provider).toBe("nebius");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing).toHaveLength(2);

    const next = await chat(org.key, { model: MODEL, messages: user("hi again") });
    const nextBody = (await next.json()) as Body;
    expect(nextBody.metadata.routing).toHaveLength(1);
    expect(nextBody.metadata.routing[0].provider).toBe("nebius");

    const metrics = (await (await call("/v1/providers/metrics")).json()) as Body;
    const row = metrics.data.find((r: Body) => r.provider === "deepinfra" && r.model === MODEL);
    expect(row.errors).toBe(1);
    expect(row.uptime).toBeLessThan(90);
  });

  it("retries 429 and network failures, but returns the request's own 4xx without retrying", async () => {
    const limited = await chat(org.key, { model: MODEL, messages: user("x [[fake@deepinfra:status=429]]") });
    expect(limited.status).toBe(200);
    expect(((await limited.json()) as Body).metadata.routing).toHaveLength(2);

    await resetMetrics();
    const reset = await chat(org.key, { model: MODEL, messages: user("x [[fake@deepinfra:reset]]") });
    expect(reset.status).toBe(200);
    expect(((await reset.json()) as Body).metadata.routing[0]).toMatchObject({ provider: "deepinfra", succeeded: false });

    await resetMetrics();
    const bad = await chat(org.key, { model: MODEL, messages: user("x [[fake@deepinfra:status=400]]") });
    expect(bad.status).toBe(400);
    const err = (await bad.json()) as Body;
    expect(err.error.message).toContain("deepinfra");
    const log = await waitForLog(bad.headers.get("x-request-id")!);
    expect(log.routing).toHaveLength(1);
    expect(log.statusCode).toBe(400);
  });

  it("gives up after three attempts with a 502 envelope", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("x [[fake:status=503]]") });
    expect(res.status).toBe(502);
    const body = (await res.json()) as Body;
    expect(body.error.type).toBe("upstream_error");
    expect(body.error.message).toMatch(/All 3 provider attempts failed/);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing).toHaveLength(3);
    expect(log.costPico).toBe(0);
    expect(log.statusCode).toBe(502);
  });

  it("every provider rate limited: a 429 envelope whose Retry-After is the provider's (SDKs wait that long before retrying)", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("x [[fake:status=429,retry_after=7]]") });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(((await res.json()) as Body).error).toMatchObject({ type: "rate_limit_error", code: "upstream_rate_limited" });
    const bare = await chat(org.key, { model: MODEL, messages: user("y [[fake:status=429]]") });
    expect(bare.status).toBe(429);
    expect(bare.headers.get("retry-after")).toBe("1");
  });

  it("x-no-fallback disables failover", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("x [[fake@deepinfra:status=500]]") }, { "x-no-fallback": "true" });
    expect(res.status).toBe(502);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing).toHaveLength(1);
  });
});

describe("provider-pinned ids", () => {
  it("stay on the pinned provider while it is healthy, even when it fails", async () => {
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x [[fake@groq:status=500]]") });
    expect(res.status).toBe(502);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing).toEqual([expect.objectContaining({ provider: "groq", succeeded: false })]);
    expect(log.requestedProvider).toBe("groq");
  });

  it("one failure with few samples keeps the pinned provider's traffic (minimum samples before the 90% rule)", async () => {
    const first = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x [[fake@groq:status=500]]") });
    expect(first.status).toBe(502);
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user(`x ${crypto.randomUUID()}`) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).metadata.used_provider).toBe("groq");
  });

  it("a failed pinned request is attributed to the pinned provider and the canonical model", async () => {
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x [[fake@groq:status=500]]") });
    expect(res.status).toBe(502);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log).toMatchObject({ requestedModel: `groq/${MODEL}`, usedProvider: "groq", usedModel: MODEL, statusCode: 502 });
  });

  it("a canonical request whose every attempt failed is attributed to the last attempt's provider", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("x [[fake:status=503]]") });
    expect(res.status).toBe(502);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.usedProvider).toBe(log.routing.at(-1)!.provider);
    expect(log.usedModel).toBe(MODEL);
  });

  it("fail over to a healthier provider once the pinned one is below 90% uptime", async () => {
    await failPinned(PINNED_MIN_SAMPLES);
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user(`x ${crypto.randomUUID()}`) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.metadata.requested_provider).toBe("groq");
    expect(body.metadata.used_provider).not.toBe("groq");
    expect(body.metadata.used_provider).toBe("deepinfra");
  });

  it("x-no-fallback keeps an unhealthy pinned provider", async () => {
    await failPinned(PINNED_MIN_SAMPLES);
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x no fallback") }, { "x-no-fallback": "true" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).metadata.used_provider).toBe("groq");
  });
});

describe("a fallback's own 4xx", () => {
  it("moves on to the next candidate, and the pinned provider is still tried", async () => {
    await failPinned(PINNED_MIN_SAMPLES);
    const res = await chat(org.key, { model: `groq/${MODEL}`, messages: user("x [[fake@deepinfra:status=404]] [[fake@nebius:status=404]]") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.metadata.routing).toEqual([
      expect.objectContaining({ provider: "deepinfra", status_code: 404, succeeded: false }),
      expect.objectContaining({ provider: "nebius", status_code: 404, succeeded: false }),
      expect.objectContaining({ provider: "groq", status_code: 200, succeeded: true }),
    ]);
  });

  it("the first choice of a canonical request still ends it (the request's own fault)", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user("x [[fake@deepinfra:status=404]]") });
    expect(res.status).toBe(404);
  });
});

describe("metadata fields", () => {
  it("routing[] entries carry apiKeyHash and logId; requested_provider and used_region are strings", async () => {
    const res = await chat(org.key, { model: MODEL, messages: user(`meta ${crypto.randomUUID()} [[fake@deepinfra:status=500]]`) });
    const body = (await res.json()) as Body;
    expect(body.metadata.routing).toHaveLength(2);
    expect(body.metadata.requested_provider).toBe("");
    expect(typeof body.metadata.used_region).toBe("string");
    for (const r of body.metadata.routing) {
      expect(r.logId).toBe(body.metadata.log_id);
      expect(r.apiKeyHash).toMatch(/^[0-9a-f]{16}$/);
      expect(JSON.stringify(body)).not.toContain("test-operator-key");
    }
    // Same operator credential, same hash; another provider's key, another hash.
    const again = (await (await chat(org.key, { model: MODEL, messages: user(`again ${crypto.randomUUID()}`) })).json()) as Body;
    const nebius = body.metadata.routing.find((r: Body) => r.provider === "nebius");
    expect(again.metadata.routing[0].apiKeyHash).toBe(nebius.apiKeyHash);
    expect(body.metadata.routing[0].apiKeyHash).not.toBe(nebius.apiKeyHash);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing[0]).toMatchObject({ logId: body.metadata.log_id, apiKeyHash: body.metadata.routing[0].apiKeyHash });
    const pinned = (await (await chat(org.key, { model: `groq/${MODEL}`, messages: user(`pinned ${crypto.randomUUID()}`) })).json()) as Body;
    expect(pinned.metadata.requested_provider).toBe("groq");
  });
});

describe("streams fail over only before the first byte", () => {
  it("a stream whose provider fails before any output is served by the next one", async () => {
    const res = await chat(org.key, { model: MODEL, stream: true, messages: user("x [[fake@deepinfra:status=500]]") });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.filter((e): e is Body => e !== "[DONE]");
    const text = chunks.flatMap((c) => c.choices).map((ch: Body) => ch.delta?.content ?? "").join("");
    expect(text).toBe(`Hello from nebius/meta-llama/Llama-3.3-70B-Instruct`);
    expect(chunks.at(-1)!.metadata.routing.map((r: Body) => r.provider)).toEqual(["deepinfra", "nebius"]);
  });
});

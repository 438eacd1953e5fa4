/**
 * Upstream timeouts (src/routing/timeouts.ts) against fake providers that hang before their
 * headers (`hang`), stall after their first chunks (`stall_after=N`) or are slow but alive
 * (`delay=MS`): a hung provider costs its first-byte timeout, not the whole-answer one; a stalled
 * stream ends with an error event in each dialect's shape; callers and projects choose their own
 * bounds within the operator's. Short bounds come from test env vars or the override headers.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { env } from "cloudflare:workers";
import { metricsWritesSettled, reportAttempts, routeStats } from "../../src/routing/live-metrics";
import { call } from "../helpers/fixtures";
import { callWithEnv, expectEnvelope, master, parseSse, resetMetrics, settledSpend, waitForLog, type Json } from "./helpers";

// Served by several OpenAI-compatible providers; deepinfra ranks first when all are healthy.
const MODEL = "llama-3.3-70b-instruct";
const PRIMARY = "deepinfra";
/** The whole-answer bound stays at its 120 s default: only the first-byte bound may end a hang. */
const FIRST_BYTE_ENV = { FIRST_BYTE_TIMEOUT_MS: "500" };

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

async function freshKey(): Promise<{ key: string; keyId: string }> {
  const k = await addKey(org, { description: "timeouts" });
  return { key: k.token, keyId: k.row.id };
}

/**
 * A non-streamed answer's first-byte bound includes generating it (max_tokens at the assumed
 * pace): 20 tokens add 500 ms. A nonce keeps the response cache out of the way.
 */
const body = (content: string, extra: Json = {}) => ({ model: MODEL, max_tokens: 20, messages: [{ role: "user", content: `${content} ${crypto.randomUUID()}` }], ...extra });
const streamBody = (content: string) => body(content, { stream: true, stream_options: { include_usage: true } });

function post(envVars: Record<string, string>, key: string, payload: Json, headers: Record<string, string> = {}, path = "/v1/chat/completions") {
  return callWithEnv(envVars, path, { method: "POST", key, body: JSON.stringify(payload), headers });
}

describe("a provider that accepts the request and never answers", () => {
  it.each([
    ["non-streamed", false],
    ["streamed", true],
  ])("%s: the next provider answers 200 within the first-byte timeout, the hang recorded as a timeout the provider's health sees", async (_name, streamed) => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const content = `hang [[fake@${PRIMARY}:hang]]`;
    const { res, settled } = await post(FIRST_BYTE_ENV, key, streamed ? streamBody(content) : body(content));
    const text = await res.text();
    const elapsed = Date.now() - started;
    expect(res.status, text).toBe(200);
    // 500 ms of first-byte timeout (1 s non-streamed) plus the second provider's answer, with slack for a loaded machine.
    expect(elapsed).toBeLessThan(5_000);
    const json = (streamed ? parseSse(text).filter((e): e is Json => e !== "[DONE]").at(-1) : JSON.parse(text)) as Json;
    expect(json.metadata.used_provider).not.toBe(PRIMARY);
    expect(json.metadata.routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false, status_code: 504, error_type: "timeout" });
    expect(json.metadata.routing[0].latency_ms).toBeGreaterThanOrEqual(450);
    expect(json.metadata.routing[0].latency_ms).toBeLessThan(3_000);
    expect(json.metadata.routing.at(-1)).toMatchObject({ succeeded: true, status_code: 200 });
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(200);
    expect(log.routing[0]).toMatchObject({ provider: PRIMARY, error_type: "timeout" });
    const { usage, logged } = await settledSpend(keyId);
    expect(usage).toBe(logged);
    // The live metrics saw the timeout: the next requests rank the provider lower.
    const health = routeStats(PRIMARY, MODEL);
    expect(health.samples).toBe(1);
    expect(health.uptime).toBeLessThan(1);
  });

  it("without an alternative the caller gets a 504 after the first-byte timeout", async () => {
    const { key } = await freshKey();
    const started = Date.now();
    const { res } = await post(FIRST_BYTE_ENV, key, body("hang [[fake:hang]]"), { "x-no-fallback": "true" });
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(504);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(json.error).toMatchObject({ type: "timeout_error", code: "upstream_timeout" });
    expect(json.error.message).toContain("1000 ms");
  });
});

describe("a first-byte bound from the provider's measured time to first token", () => {
  it("4 x the p99 once there are enough samples (the floor lowered for the test), shown by GET /v1/providers/metrics", async () => {
    const { key } = await freshKey();
    const now = Date.now();
    const fast = Array.from({ length: 12 }, () => ({ provider: PRIMARY, model: MODEL, at: now, outcome: "ok" as const, ttftMs: 150, outputTokens: 10, generationMs: 100 }));
    const pending: Promise<unknown>[] = [];
    reportAttempts(env, (p) => pending.push(p), fast);
    await Promise.all(pending);
    await metricsWritesSettled(env);
    // Interpolated in the 0-200 ms bin and capped by the slowest sample, not the bin's 200 ms edge.
    expect(routeStats(PRIMARY, MODEL).ttftP99Ms).toBe(150);
    const metrics = (await (await call("/v1/providers/metrics")).json()) as Json;
    expect((metrics.data as Json[]).find((r) => r.provider === PRIMARY && r.model === MODEL)).toMatchObject({ ttft_p95_ms: 150, ttft_p99_ms: 150 });

    // The default (15 s) would apply without evidence; 4 x 150 ms = 600 ms does now.
    const started = Date.now();
    const { res } = await post({ FIRST_BYTE_TIMEOUT_MIN_MS: "500" }, key, streamBody(`hang [[fake@${PRIMARY}:hang]]`));
    const events = parseSse(await res.text());
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    const routing = (events.filter((e): e is Json => e !== "[DONE]").at(-1) as Json).metadata.routing as Json[];
    expect(routing[0]).toMatchObject({ provider: PRIMARY, error_type: "timeout" });
    expect(routing[0]!.latency_ms).toBeGreaterThanOrEqual(550);
  });
});

describe("per-request and per-project timeouts", () => {
  it("x-first-byte-timeout-ms shortens the wait; a caller's shorter bound does not count against the provider", async () => {
    const { key } = await freshKey();
    const started = Date.now();
    const { res } = await post({}, key, body(`hang [[fake@${PRIMARY}:hang]]`), { "x-first-byte-timeout-ms": "1000" });
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(json.metadata.routing[0]).toMatchObject({ provider: PRIMARY, error_type: "timeout", status_code: 504 });
    expect(json.metadata.routing[0].latency_ms).toBeGreaterThanOrEqual(950);
    // 15 s is what the gateway would have waited for this provider: 1 s is the caller's choice.
    expect(routeStats(PRIMARY, MODEL).samples).toBe(0);
  });

  it("x-timeout-ms bounds the whole answer", async () => {
    const { key } = await freshKey();
    const started = Date.now();
    const { res } = await post({}, key, body("slow [[fake:delay=5000]]"), { "x-timeout-ms": "1000", "x-no-fallback": "true" });
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(504);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it.each([
    ["x-first-byte-timeout-ms", "soon"],
    ["x-first-byte-timeout-ms", "10"],
    ["x-timeout-ms", "3600000"],
  ])("%s: %s is a 400 naming the header and the operator's bounds", async (name, value) => {
    const { key } = await freshKey();
    const { res } = await post({}, key, body("hi"), { [name]: value });
    const json = await expectEnvelope(res, 400);
    expect(json.error).toMatchObject({ type: "invalid_request_error", param: name, code: "invalid_timeout" });
    expect(json.error.message).toContain("from 1000 to 300000");
  });

  it("the operator's vars bound the headers", async () => {
    const { key } = await freshKey();
    const { res } = await post({ TIMEOUT_OVERRIDE_MAX_MS: "20000" }, key, body("hi"), { "x-timeout-ms": "30000" });
    const json = await expectEnvelope(res, 400);
    expect(json.error.message).toContain("from 1000 to 20000");
  });

  it("a project's firstByteTimeoutMs (master API) applies to its keys", async () => {
    const own = await seedOrg();
    const patched = await master(own.masterKey, "PATCH", `/projects/${own.projectId}`, { firstByteTimeoutMs: 1000, timeoutMs: 60_000 });
    const view = (await patched.json()) as Json;
    expect(patched.status, JSON.stringify(view)).toBe(200);
    expect(view.project).toMatchObject({ firstByteTimeoutMs: 1000, timeoutMs: 60_000, hedging: false });
    const bad = await master(own.masterKey, "PATCH", `/projects/${own.projectId}`, { firstByteTimeoutMs: "fast" });
    await expectEnvelope(bad, 400);
    const started = Date.now();
    const { res } = await post({}, own.key, body(`hang [[fake@${PRIMARY}:hang]]`));
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(json.metadata.routing[0]).toMatchObject({ provider: PRIMARY, error_type: "timeout" });
  });
});

describe("a stream that stalls after its first chunks", () => {
  const STALL_ENV = { STREAM_IDLE_TIMEOUT_MS: "600" };

  it("chat: ends with an error event and [DONE] within the between-chunk timeout, billed for what was delivered", async () => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const { res, settled } = await post(STALL_ENV, key, streamBody("s [[fake:words=12,stall_after=3]]"));
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(Date.now() - started).toBeLessThan(5_000);
    const content = events.filter((e): e is Json => e !== "[DONE]" && Array.isArray(e.choices)).map((e) => e.choices[0]?.delta?.content ?? "").join("");
    expect(content).toBe("w1 w2 ");
    expect(events.at(-1)).toBe("[DONE]");
    expect((events.at(-2) as Json).error).toMatchObject({ type: "upstream_error" });
    expect((events.at(-2) as Json).error.message).toContain("sent nothing for 600 ms");
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(502);
    expect(log.errorType).toBe("timeout");
    // The two words that reached the client are billed (estimated: the provider sent no usage).
    expect(log.completionTokens).toBeGreaterThan(0);
    expect(log.costPico).toBeGreaterThan(0);
    const { usage, logged } = await settledSpend(keyId);
    expect(usage).toBe(logged);
    expect(usage).toBe(BigInt(log.costPico));
  });

  it("Messages: an Anthropic `error` event", async () => {
    const { key } = await freshKey();
    const { res } = await post(STALL_ENV, key, { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: "s [[fake:words=12,stall_after=3]]" }] }, {}, "/v1/messages");
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw).toContain("event: error");
    expect(raw).toMatch(/"type":"error","error":\{"type":"api_error"/);
  });

  it("Responses: an `error` event", async () => {
    const { key } = await freshKey();
    const { res } = await post(STALL_ENV, key, { model: MODEL, stream: true, input: "s [[fake:words=12,stall_after=3]]" }, {}, "/v1/responses");
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw).toContain("event: error");
    expect(raw).toContain("sent nothing for 600 ms");
  });

  it("x-timeout-ms ends a stream that outruns it, even while chunks keep coming", async () => {
    const { key } = await freshKey();
    const started = Date.now();
    const { res } = await post({}, key, streamBody("s [[fake:words=40,drip=100]]"), { "x-timeout-ms": "1500" });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(Date.now() - started).toBeLessThan(3_500);
    expect((events.at(-2) as Json).error.message).toContain("did not finish the answer within the request's timeout");
  });
});

/**
 * Fault tests: fake upstreams misbehave on command
 * (`[[fake:...]]` / `[[fake@<provider>:...]]`, see test/fake-upstream/fake-common.mjs) and every
 * request through `POST /v1/chat/completions` still ends well:
 *  - failover to another provider when one serves the model, else a clear error envelope
 *    (non-stream) or an SSE error event followed by [DONE] (stream);
 *  - a request_logs row for every request;
 *  - the key's spend in its KeyState DO equals the sum of its logged costs (0 for failures).
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { callWithEnv, chat, expectNoStack, parseSse, resetMetrics, settledSpend, waitForLog, type Json } from "./helpers";

// Served by several OpenAI-compatible providers; deepinfra ranks first when all are healthy.
const MODEL = "llama-3.3-70b-instruct";
const PRIMARY = "deepinfra";
/** Short per-attempt timeout for hang tests (the default is 120 s). */
const TIMEOUT_ENV = { UPSTREAM_TIMEOUT_MS: "400" };

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

/** A fresh key per test so that its spend can be compared with exactly its own log rows. */
async function freshKey(): Promise<{ key: string; keyId: string }> {
  const k = await addKey(org, { description: "faults" });
  return { key: k.token, keyId: k.row.id };
}

const body = (content: string, extra: Json = {}) => ({ model: MODEL, messages: [{ role: "user", content }], ...extra });

async function expectBilledAsLogged(keyId: string): Promise<bigint> {
  const { usage, logged } = await settledSpend(keyId);
  expect(usage).toBe(logged);
  return usage;
}

async function chatWithTimeout(key: string, payload: Json, headers: Record<string, string> = {}) {
  return callWithEnv(TIMEOUT_ENV, "/v1/chat/completions", { method: "POST", key, body: JSON.stringify(payload), headers });
}

describe("non-streamed faults on the primary provider fail over", () => {
  it.each([
    ["connection reset", "reset"],
    ["HTTP 500", "status=500"],
    ["HTTP 502", "status=502"],
    ["HTTP 503", "status=503"],
    ["HTTP 429 with Retry-After", "status=429,retry_after=1"],
    ["malformed JSON", "malformed"],
  ])("%s", async (_name, directive) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, body(`fault [[fake@${PRIMARY}:${directive}]]`));
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const json = JSON.parse(text) as Json;
    expect(json.choices[0].message.content).toMatch(/^Hello from /);
    expect(json.metadata.used_provider).not.toBe(PRIMARY);
    expect(json.metadata.routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false });
    expect(json.metadata.routing.at(-1)).toMatchObject({ succeeded: true });
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.id).toBe(json.metadata.log_id);
    expect(log.statusCode).toBe(200);
    expect(log.routing.length).toBe(json.metadata.routing.length);
    expect(log.costPico).toBe(Math.round(json.usage.cost * 1e12));
    expect(await expectBilledAsLogged(keyId)).toBeGreaterThan(0n);
  });

  it("a hang past the per-attempt timeout (UPSTREAM_TIMEOUT_MS)", async () => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const { res, settled } = await chatWithTimeout(key, body(`slow [[fake@${PRIMARY}:hang]]`));
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(json.metadata.routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false, status_code: 504 });
    expect(json.metadata.used_provider).not.toBe(PRIMARY);
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(200);
    await expectBilledAsLogged(keyId);
  });
});

describe("non-streamed faults without an alternative give a clear envelope", () => {
  it.each([
    ["connection reset", "reset", 502, "upstream_error"],
    ["HTTP 500", "status=500", 502, "upstream_error"],
    ["HTTP 502", "status=502", 502, "upstream_error"],
    ["HTTP 503", "status=503", 502, "upstream_error"],
    ["HTTP 429 with Retry-After", "status=429,retry_after=1", 429, "rate_limit_error"],
    ["malformed JSON", "malformed", 502, "upstream_error"],
  ])("%s", async (_name, directive, status, type) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, body(`fault [[fake:${directive}]]`), { "x-no-fallback": "true" });
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expectNoStack(text);
    const json = JSON.parse(text) as Json;
    expect(json.error).toMatchObject({ type, param: null });
    expect(json.error.message).toContain(PRIMARY);
    expect(typeof json.error.code).toBe("string");
    expect(text).not.toContain("test-operator-key");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(status);
    expect(log.costPico).toBe(0);
    expect(log.routing).toHaveLength(1);
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it("every provider failing: the last failure, after at most three attempts", async () => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, body("fault [[fake:status=500]]"));
    const json = (await res.json()) as Json;
    expect(res.status).toBe(502);
    expect(json.error.type).toBe("upstream_error");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing).toHaveLength(3);
    expect(log.costPico).toBe(0);
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it("a hang past the per-attempt timeout is a 504", async () => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const { res, settled } = await chatWithTimeout(key, body("slow [[fake:hang]]"), { "x-no-fallback": "true" });
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(504);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(json.error).toMatchObject({ type: "timeout_error", code: "upstream_timeout" });
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(504);
    expect(log.costPico).toBe(0);
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it("a huge answer is delivered whole and billed for what was delivered", async () => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, body("big [[fake:huge=20000]]"));
    const json = (await res.json()) as Json;
    expect(res.status).toBe(200);
    const content = json.choices[0].message.content as string;
    expect(content.split(" ")).toHaveLength(20000);
    expect(json.usage.completion_tokens).toBe(20000);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.completionTokens).toBe(20000);
    expect(await expectBilledAsLogged(keyId)).toBe(BigInt(log.costPico));
  });
});

/** Reads an SSE response to the end, noting when each `data:` payload arrived. */
async function readTimed(res: Response): Promise<{ events: Array<Json | "[DONE]">; arrivals: Array<{ at: number; payload: Json | "[DONE]" }>; raw: string }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let raw = "";
  const arrivals: Array<{ at: number; payload: Json | "[DONE]" }> = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    raw += text;
    buf += text;
    let idx: number;
    while ((idx = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      for (const p of parseSse(block + "\n\n")) arrivals.push({ at: Date.now(), payload: p });
    }
  }
  return { events: arrivals.map((a) => a.payload), arrivals, raw };
}

const contentOf = (events: Array<Json | "[DONE]">): string =>
  events
    .filter((e): e is Json => e !== "[DONE]" && Array.isArray(e.choices))
    .map((e) => (e.choices as Json[]).map((c) => c.delta?.content ?? "").join(""))
    .join("");

const streamBody = (content: string) => body(content, { stream: true, stream_options: { include_usage: true } });

describe("streamed faults", () => {
  it.each([
    ["connection reset before the first byte", "reset"],
    ["HTTP 503 before the first byte", "status=503"],
    ["HTTP 429 before the first byte", "status=429,retry_after=1"],
    ["connection reset right after the headers", "reset_midstream"],
  ])("%s fails over", async (_name, directive) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, streamBody(`s [[fake@${PRIMARY}:${directive}]]`));
    expect(res.status).toBe(200);
    const { events, raw } = await readTimed(res);
    expectNoStack(raw);
    expect(events.at(-1)).toBe("[DONE]");
    const final = events.at(-2) as Json;
    expect(final.error).toBeUndefined();
    expect(final.metadata.used_provider).not.toBe(PRIMARY);
    expect(final.metadata.routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false });
    expect(contentOf(events)).toMatch(/^Hello from /);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(200);
    expect(log.streamed).toBe(true);
    expect(await expectBilledAsLogged(keyId)).toBeGreaterThan(0n);
  });

  it("a hang before the first byte fails over after the per-attempt timeout", async () => {
    const { key, keyId } = await freshKey();
    const { res, settled } = await chatWithTimeout(key, streamBody(`s [[fake@${PRIMARY}:hang]]`));
    expect(res.status).toBe(200);
    const { events } = await readTimed(res);
    const final = events.at(-2) as Json;
    expect(final.metadata.routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false });
    await settled();
    await waitForLog(res.headers.get("x-request-id")!);
    await expectBilledAsLogged(keyId);
  });

  it.each([
    ["truncated stream", "truncate"],
    ["connection reset after output (test/fake-upstream/faults.mjs)", "reset_after=4"],
    ["malformed JSON mid-stream", "malformed"],
    ["error event mid-stream", "error_midstream"],
  ])("%s ends with an SSE error event, a log row and no charge", async (_name, directive) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, streamBody(`s [[fake:words=12,${directive}]]`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events, raw } = await readTimed(res);
    expectNoStack(raw);
    expect(raw).not.toContain("test-operator-key");
    expect(events.at(-1)).toBe("[DONE]");
    // Output produced before the failure reached the client as it was generated.
    expect(contentOf(events)).toMatch(/^w1 /);
    const last = events.at(-2) as Json;
    expect(last.error, raw.slice(-500)).toMatchObject({ type: "upstream_error", param: null });
    expect(typeof last.error.message).toBe("string");
    expect(typeof last.error.code).toBe("string");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(502);
    expect(log.streamed).toBe(true);
    expect(log.costPico).toBe(0);
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it("a hang mid-stream is cut by the idle timeout with an SSE error event", async () => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const { res, settled } = await chatWithTimeout(key, streamBody("s [[fake:words=12,hang_midstream]]"));
    expect(res.status).toBe(200);
    const { events } = await readTimed(res);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(events.at(-1)).toBe("[DONE]");
    expect((events.at(-2) as Json).error).toMatchObject({ type: "upstream_error" });
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(502);
    expect(log.costPico).toBe(0);
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it("a stream that stops without [DONE] but finished its answer is complete and billed", async () => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, streamBody("s [[fake:words=8,no_done]]"));
    const { events } = await readTimed(res);
    expect(events.at(-1)).toBe("[DONE]");
    const final = events.at(-2) as Json;
    expect(final.error).toBeUndefined();
    expect(final.usage.completion_tokens).toBe(8);
    expect(contentOf(events).trim()).toBe("w1 w2 w3 w4 w5 w6 w7 w8");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(200);
    expect(log.costPico).toBe(Math.round(final.usage.cost * 1e12));
    expect(await expectBilledAsLogged(keyId)).toBe(BigInt(log.costPico));
  });

  it("a slow drip stream is forwarded chunk by chunk as it is produced", async () => {
    const { key, keyId } = await freshKey();
    const started = Date.now();
    const res = await chat(key, streamBody("s [[fake:words=10,drip=60]]"));
    const { arrivals } = await readTimed(res);
    const contentArrivals = arrivals.filter((a) => a.payload !== "[DONE]" && (a.payload.choices as Json[] | undefined)?.some((c) => c.delta?.content));
    expect(contentArrivals.length).toBeGreaterThanOrEqual(10);
    const first = contentArrivals[0]!.at;
    const last = contentArrivals.at(-1)!.at;
    // The upstream needs ~12 x 60 ms for its frames: the first word must be here long before the last.
    expect(last - first).toBeGreaterThanOrEqual(400);
    expect(first - started).toBeLessThan(last - started - 400);
    // Arrivals are spread out, not delivered in one burst at the end.
    const gaps = contentArrivals.slice(1).map((a, i) => a.at - contentArrivals[i]!.at);
    expect(gaps.filter((g) => g >= 30).length).toBeGreaterThanOrEqual(5);
    await waitForLog(res.headers.get("x-request-id")!);
    expect(await expectBilledAsLogged(keyId)).toBeGreaterThan(0n);
  });

  it("a huge stream is delivered whole", async () => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, streamBody("s [[fake:huge=20000]]"));
    const { events } = await readTimed(res);
    expect(contentOf(events).trim().split(" ")).toHaveLength(20000);
    const final = events.at(-2) as Json;
    expect(final.usage.completion_tokens).toBe(20000);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.completionTokens).toBe(20000);
    expect(await expectBilledAsLogged(keyId)).toBe(BigInt(log.costPico));
  });
});

describe("faults of the other wire formats (pinned provider, no fallback)", () => {
  const TARGETS = [
    { model: "anthropic/claude-sonnet-4", provider: "anthropic" },
    { model: "google-ai-studio/gemini-2.5-flash", provider: "google-ai-studio" },
  ];
  const pinned = (t: (typeof TARGETS)[number], content: string, extra: Json = {}) => ({ model: t.model, messages: [{ role: "user", content }], ...extra });

  it.each(TARGETS.flatMap((t) => [
    { t, directive: "reset", status: 502 },
    { t, directive: "status=503", status: 502 },
    { t, directive: "status=429,retry_after=1", status: 429 },
    { t, directive: "malformed", status: 502 },
  ]))("$t.provider: $directive -> $status envelope", async ({ t, directive, status }) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, pinned(t, `x [[fake:${directive}]]`), { "x-no-fallback": "true" });
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expectNoStack(text);
    const json = JSON.parse(text) as Json;
    expect(json.error.message).toContain(t.provider);
    expect(text).not.toContain(`test-operator-key-${t.provider}`);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log).toMatchObject({ statusCode: status, costPico: 0 });
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it.each(TARGETS.flatMap((t) => [
    { t, directive: "words=12,truncate" },
    { t, directive: "words=12,malformed" },
  ]))("$t.provider stream: $directive -> SSE error event, no charge", async ({ t, directive }) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, pinned(t, `s [[fake:${directive}]]`, { stream: true }), { "x-no-fallback": "true" });
    expect(res.status).toBe(200);
    const { events, raw } = await readTimed(res);
    expectNoStack(raw);
    expect(events.at(-1)).toBe("[DONE]");
    expect((events.at(-2) as Json).error, raw.slice(-400)).toMatchObject({ type: "upstream_error" });
    expect(contentOf(events)).toMatch(/^w1 /);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log).toMatchObject({ statusCode: 502, costPico: 0, streamed: true });
    expect(await expectBilledAsLogged(keyId)).toBe(0n);
  });

  it.each(TARGETS)("$provider: a stream completes and is billed as logged", async (t) => {
    const { key, keyId } = await freshKey();
    const res = await chat(key, pinned(t, "s [[fake:words=6,drip=20]]", { stream: true }));
    const { events } = await readTimed(res);
    const final = events.at(-2) as Json;
    expect(final.error).toBeUndefined();
    expect(contentOf(events).trim()).toBe("w1 w2 w3 w4 w5 w6");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.costPico).toBe(Math.round(final.usage.cost * 1e12));
    expect(await expectBilledAsLogged(keyId)).toBe(BigInt(log.costPico));
  });
});

describe("an internal failure after authentication", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  it("is a generic 500 envelope, and the request still gets its log row", async () => {
    const { key } = await freshKey();
    // The KeyState namespace fails (e.g. Durable Objects unavailable): not an ApiError.
    const brokenKeyState = {
      idFromName: (name: string) => name,
      get: () => ({
        admit: () => Promise.reject(new Error("secret internal detail at /src/durable-objects/key-state.ts:42")),
        settle: () => Promise.resolve({ spend: {}, crossed: [] }),
      }),
    };
    // The operator's log gets the real error (that is the point of onError); the test keeps it
    // out of the test output and checks it instead.
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { res, settled } = await callWithEnv({ KEY_STATE: brokenKeyState }, "/v1/chat/completions", { method: "POST", key, body: JSON.stringify(body("x")) });
    const text = await res.text();
    expect(logged).toHaveBeenCalledWith("unhandled error", expect.stringContaining("secret internal detail"));
    expect(res.status).toBe(500);
    expect(text).not.toContain("secret internal detail");
    expectNoStack(text);
    expect(JSON.parse(text)).toEqual({ error: { message: "Internal server error", type: "api_error", param: null, code: "internal_error" } });
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log).toMatchObject({ statusCode: 500, errorType: "internal_error", costPico: 0 });
    expect(log.errorMessage).not.toContain("secret internal detail");
  });
});

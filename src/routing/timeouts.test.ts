import { describe, expect, it } from "vitest";
import type { Env } from "../env";
import { ApiError } from "../errors/api-error";
import { attemptTimeouts, requestTimeouts, type RequestTimeouts } from "./timeouts";
import { binOf, emptyHistogram, quantileMs } from "./ttft-histogram";
import { addSample, mergeBuckets, summarize, type AttemptSample, type Bucket } from "./metrics";

const env = {} as Env;
const streamReq = { stream: true };
const noNeeds = { promptTokens: 100, maxTokens: undefined };
const rt = (over: Partial<RequestTimeouts> = {}, headers: Record<string, string> = {}, e: Env = env): RequestTimeouts => ({
  ...requestTimeouts(e, new Headers(headers), {}, streamReq, noNeeds),
  ...over,
});
const stats = (p99: number | null, p95: number | null = p99, throughput: number | null = null) => ({ uptime: 1, throughput, latencyMs: p99, ttftP99Ms: p99, ttftP95Ms: p95 });

describe("first-byte timeout of an attempt", () => {
  it("is the documented default (15 s) before there is evidence, under the 120 s whole-answer bound", () => {
    const t = attemptTimeouts(rt(), null, false, false);
    expect(t).toMatchObject({ firstByteMs: 15_000, derivedFirstByteMs: 15_000, totalMs: 120_000, interChunkMs: 30_000, hedgeAfterMs: null });
  });

  it("is four times the measured p99, at least 10 s and at most 30 s", () => {
    expect(attemptTimeouts(rt(), stats(1_000), false, false).firstByteMs).toBe(10_000);
    expect(attemptTimeouts(rt(), stats(4_500), false, false).firstByteMs).toBe(18_000);
    expect(attemptTimeouts(rt(), stats(25_000), false, false).firstByteMs).toBe(30_000);
  });

  it("is longer for a request that thinks first and for a large prompt", () => {
    expect(attemptTimeouts(rt({ thinkingRequested: true }), null, false, false).firstByteMs).toBe(45_000);
    // A reasoning model thinks unless its effort is off.
    expect(attemptTimeouts(rt(), null, true, false).firstByteMs).toBe(45_000);
    expect(attemptTimeouts(rt(), null, true, true).firstByteMs).toBe(15_000);
    // 110k prompt tokens: 10 s more of prefill.
    expect(attemptTimeouts(rt({ promptTokens: 110_000 }), null, false, false).firstByteMs).toBe(25_000);
  });

  it("includes generating the answer when it is not streamed (the answer arrives whole)", () => {
    // 512 assumed tokens at 40 tokens/s without evidence; max_tokens and the measured pace (at half) when known.
    expect(attemptTimeouts(rt({ stream: false }), null, false, false).firstByteMs).toBe(15_000 + 12_800);
    expect(attemptTimeouts(rt({ stream: false, maxTokens: 100 }), stats(null, null, 100), false, false).firstByteMs).toBe(15_000 + 2_000);
    // Never past the whole-answer bound.
    expect(attemptTimeouts(rt({ stream: false, maxTokens: 100_000 }), null, false, false).firstByteMs).toBe(120_000);
  });

  it("follows the operator's vars", () => {
    const e = { FIRST_BYTE_TIMEOUT_MS: "500", STREAM_IDLE_TIMEOUT_MS: "700", UPSTREAM_TIMEOUT_MS: "60000" } as unknown as Env;
    expect(attemptTimeouts(rt({}, {}, e), null, false, false)).toMatchObject({ firstByteMs: 500, interChunkMs: 700, totalMs: 60_000 });
  });
});

describe("caller overrides", () => {
  it("headers set the first-byte and whole-answer timeouts; a shorter one than derived is not the provider's fault", () => {
    const t = attemptTimeouts(rt({}, { "x-first-byte-timeout-ms": "2000", "x-timeout-ms": "90000" }), null, false, false);
    expect(t).toMatchObject({ firstByteMs: 2_000, derivedFirstByteMs: 15_000, totalMs: 90_000 });
    expect(rt({}, { "x-timeout-ms": "5000" }).totalChosen).toBe(true);
    expect(rt().totalChosen).toBe(false);
    // The first byte never waits past the whole answer.
    expect(attemptTimeouts(rt({}, { "x-timeout-ms": "5000" }), null, false, false).firstByteMs).toBe(5_000);
  });

  it.each([["abc"], ["-5"], ["1.5"], ["999"], ["300001"], [""]])("a header value %j is a 400 naming the header and its bounds", (v) => {
    let err: unknown;
    try {
      rt({}, { "x-first-byte-timeout-ms": v });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain("'x-first-byte-timeout-ms'");
    expect((err as ApiError).message).toContain("1000 to 300000");
  });

  it("the project's settings apply when no header is sent, clamped to the operator's bounds", () => {
    const t = requestTimeouts(env, new Headers(), { firstByteTimeoutMs: 3_000, timeoutMs: 10_000_000, hedging: true }, streamReq, noNeeds);
    expect(t).toMatchObject({ firstByteMs: 3_000, totalMs: 300_000, hedging: true, totalChosen: true });
    const h = requestTimeouts(env, new Headers({ "x-first-byte-timeout-ms": "4000" }), { firstByteTimeoutMs: 3_000 }, streamReq, noNeeds);
    expect(h.firstByteMs).toBe(4_000);
  });
});

describe("hedge delay", () => {
  it("is the measured p95, else HEDGE_AFTER_MS (2 s), only with hedging on", () => {
    expect(attemptTimeouts(rt({ hedging: true }), null, false, false).hedgeAfterMs).toBe(2_000);
    expect(attemptTimeouts(rt({ hedging: true }), stats(3_000, 1_500), false, false).hedgeAfterMs).toBe(1_500);
    expect(attemptTimeouts(rt({ hedging: false }), stats(3_000, 1_500), false, false).hedgeAfterMs).toBeNull();
  });
});

describe("time-to-first-token percentiles in the live metrics", () => {
  const sample = (ttftMs: number, at: number): AttemptSample => ({ provider: "p", model: "m", at, outcome: "ok", ttftMs, outputTokens: 10, generationMs: 100 });

  it("p95 and p99 are the upper edges of their bins, none below ten samples", () => {
    const now = Date.now();
    let buckets: Bucket[] = [];
    for (let i = 0; i < 9; i++) buckets = addSample(buckets, sample(300, now));
    expect(summarize(buckets, now).ttftP99Ms).toBeNull();
    for (let i = 0; i < 90; i++) buckets = addSample(buckets, sample(300, now));
    buckets = addSample(buckets, sample(9_000, now));
    const s = summarize(buckets, now);
    expect(s.ttftP95Ms).toBe(400);
    expect(s.ttftP99Ms).toBe(400);
    for (let i = 0; i < 5; i++) buckets = addSample(buckets, sample(9_000, now));
    expect(summarize(buckets, now).ttftP99Ms).toBe(10_000);
  });

  it("merging the global snapshot with this isolate's samples adds their histograms", () => {
    const now = Date.now();
    let global: Bucket[] = [];
    let local: Bucket[] = [];
    for (let i = 0; i < 6; i++) global = addSample(global, sample(300, now));
    for (let i = 0; i < 6; i++) local = addSample(local, sample(5_000, now));
    const merged = mergeBuckets(global, local);
    expect(summarize(merged, now)).toMatchObject({ ttftP95Ms: 7_000, ttftP99Ms: 7_000 });
    // The inputs are not changed.
    expect(summarize(global, now).ttftP99Ms).toBeNull();
    expect(global[0]!.ttftHist!.reduce((a, b) => a + b, 0)).toBe(6);
  });

  it("buckets stored before the histogram existed still summarize", () => {
    const old: Bucket = { minute: Math.floor(Date.now() / 60_000), requests: 20, errors: 0, ttftSum: 20_000, ttftCount: 20, tokens: 0, generationMs: 0 };
    expect(summarize([old], Date.now())).toMatchObject({ latencyMs: 1_000, ttftP99Ms: null });
  });

  it("bins", () => {
    expect(binOf(0)).toBe(0);
    expect(binOf(200)).toBe(0);
    expect(binOf(201)).toBe(1);
    expect(binOf(1e9)).toBe(emptyHistogram().length - 1);
    expect(quantileMs([0, 0, 10], 0.5, 10)).toBe(700);
  });
});

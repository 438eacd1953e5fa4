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

  it("a percentile is interpolated inside its bin and capped by the slowest sample, not read as the bin's upper edge", () => {
    const now = Date.now();
    let buckets: Bucket[] = [];
    for (let i = 0; i < 9; i++) buckets = addSample(buckets, sample(420, now));
    expect(summarize(buckets, now).ttftP95Ms).toBeNull(); // fewer than ten samples
    for (let i = 0; i < 91; i++) buckets = addSample(buckets, sample(420, now));
    // All 100 in the 400-700 ms bin: the bin's edge said 700; interpolation says 685, the slowest sample 420.
    expect(summarize(buckets, now)).toMatchObject({ ttftP50Ms: 420, ttftP95Ms: 420, ttftP99Ms: 420 });
  });

  it("p95 and p99 across bins, the open last bin bounded by the slowest sample", () => {
    const now = Date.now();
    let buckets: Bucket[] = [];
    for (let i = 0; i < 99; i++) buckets = addSample(buckets, sample(300, now));
    buckets = addSample(buckets, sample(9_000, now));
    // Rank 95 of 99 in the 200-400 ms bin: 200 + 200 x 95/99.
    expect(summarize(buckets, now)).toMatchObject({ ttftP95Ms: 392, ttftP99Ms: 400 });
    for (let i = 0; i < 5; i++) buckets = addSample(buckets, sample(9_000, now));
    // Rank 103.95 in the 7-10 s bin would read 9475 ms; no sample took longer than 9 s.
    expect(summarize(buckets, now).ttftP99Ms).toBe(9_000);
    buckets = addSample(buckets, sample(90_000, now));
    for (let i = 0; i < 20; i++) buckets = addSample(buckets, sample(70_000, now));
    // Above the last edge (60 s) the slowest sample is the bin's upper edge: 60 s + 30 s x 19.74/21.
    expect(summarize(buckets, now).ttftP99Ms).toBe(88_200);
  });

  it("merging the global snapshot with this isolate's samples adds their histograms and keeps the larger maximum", () => {
    const now = Date.now();
    let global: Bucket[] = [];
    let local: Bucket[] = [];
    for (let i = 0; i < 6; i++) global = addSample(global, sample(300, now));
    for (let i = 0; i < 6; i++) local = addSample(local, sample(5_000, now));
    const merged = mergeBuckets(global, local);
    expect(summarize(merged, now)).toMatchObject({ ttftP95Ms: 5_000, ttftP99Ms: 5_000 });
    expect(summarize(mergeBuckets(local, global), now)).toMatchObject({ ttftP95Ms: 5_000, ttftP99Ms: 5_000 });
    // The inputs are not changed.
    expect(summarize(global, now).ttftP99Ms).toBeNull();
    expect(global[0]!.ttftHist!.reduce((a, b) => a + b, 0)).toBe(6);
    expect(global[0]!.ttftMaxMs).toBe(300);
  });

  it("buckets stored before the histogram or its maximum existed still summarize (uncapped)", () => {
    const minute = Math.floor(Date.now() / 60_000);
    const old: Bucket = { minute, requests: 20, errors: 0, ttftSum: 20_000, ttftCount: 20, tokens: 0, generationMs: 0 };
    expect(summarize([old], Date.now())).toMatchObject({ latencyMs: 1_000, ttftP99Ms: null });
    const hist = emptyHistogram();
    hist[binOf(500)] = 20;
    const noMax: Bucket = { ...old, ttftHist: hist };
    expect(summarize([noMax], Date.now()).ttftP95Ms).toBe(685);
    // A new sample in that minute does not invent a maximum for the older ones.
    const after = addSample([{ ...noMax, ttftHist: [...hist] }], { provider: "p", model: "m", at: minute * 60_000 + 1, outcome: "ok", ttftMs: 450, outputTokens: 1, generationMs: 1 });
    expect(after[0]!.ttftMaxMs).toBeUndefined();
    const withMax = addSample([], { provider: "p", model: "m", at: minute * 60_000 + 1, outcome: "ok", ttftMs: 450, outputTokens: 1, generationMs: 1 });
    expect(mergeBuckets(withMax, [noMax])[0]!.ttftMaxMs).toBeUndefined();
    expect(mergeBuckets([noMax], withMax)[0]!.ttftMaxMs).toBeUndefined();
  });

  it("bins", () => {
    expect(binOf(0)).toBe(0);
    expect(binOf(200)).toBe(0);
    expect(binOf(201)).toBe(1);
    expect(binOf(1e9)).toBe(emptyHistogram().length - 1);
    expect(quantileMs([0, 0, 10], 0.5, 10)).toBe(550);
    expect(quantileMs([0, 0, 10], 0.5, 10, 450)).toBe(450);
    expect(quantileMs([0, 0, 10], 0.5, 9)).toBeNull();
  });
});

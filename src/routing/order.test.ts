import { describe, expect, it } from "vitest";
import type { Candidate, RequestNeeds } from "./candidates";
import { MAX_ATTEMPTS, orderCandidates, PINNED_MIN_SAMPLES } from "./order";
import type { RouteStats } from "./score";

const needs: RequestNeeds = { stream: false, tools: false, vision: false, audio: false, audioOutput: false, files: false, json: "none", n: 1, promptTokens: 10, maxTokens: 10 };

function cand(providerId: string, input: number, pinned = false): Candidate {
  return {
    providerId,
    modelId: "m",
    pinned,
    mapping: { providerId, externalId: "m", pricing: { input: String(input), output: String(input) }, maxOutput: 1000 },
    credential: { source: "credits", providerId },
  } as unknown as Candidate;
}

const healthy: RouteStats = { uptime: 1, throughput: null, latencyMs: null, samples: 100 };
const ids = (list: Candidate[]) => list.map((c) => c.providerId);

describe("orderCandidates: pinned ids", () => {
  const pinned = cand("groq", 3, true);
  const others = [cand("a", 1), cand("b", 2), cand("c", 4)];
  const all = [pinned, ...others];
  const statsWith = (p: RouteStats) => (c: Candidate) => (c === pinned ? p : healthy);
  const opts = (p: RouteStats, random = () => 0.99) => ({ noFallback: false, explorationRate: 0, pinnedProbeRate: 0.1, random, stats: statsWith(p) });

  it("stays on the pinned provider while it has too few recent samples, whatever its uptime", () => {
    // One 500 out of two attempts: 50% uptime is no evidence yet.
    const p = { uptime: 0.5, throughput: null, latencyMs: null, samples: 1 };
    expect(ids(orderCandidates(all, needs, opts(p)))).toEqual(["groq"]);
    expect(ids(orderCandidates(all, needs, opts({ ...p, samples: PINNED_MIN_SAMPLES - 1 })))).toEqual(["groq"]);
    expect(ids(orderCandidates(all, needs, opts({ ...p, samples: undefined })))).toEqual(["groq"]);
  });

  it("below 90% with enough samples starts elsewhere and always keeps the pinned provider as an attempt", () => {
    const p = { uptime: 0.2, throughput: null, latencyMs: null, samples: PINNED_MIN_SAMPLES };
    const plan = orderCandidates(all, needs, opts(p));
    expect(plan).toHaveLength(MAX_ATTEMPTS);
    expect(ids(plan)).toEqual(["a", "b", "groq"]);
  });

  it("sends a small share of requests to the low-uptime pinned provider first so it can recover", () => {
    const p = { uptime: 0.2, throughput: null, latencyMs: null, samples: 20 };
    expect(ids(orderCandidates(all, needs, opts(p, () => 0.05)))).toEqual(["groq", "a", "b"]);
    expect(ids(orderCandidates(all, needs, opts(p, () => 0.5)))).toEqual(["a", "b", "groq"]);
    let probes = 0;
    let seed = 1;
    const lcg = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 2000; i++) if (orderCandidates(all, needs, opts(p, lcg))[0] === pinned) probes++;
    expect(probes / 2000).toBeGreaterThan(0.05);
    expect(probes / 2000).toBeLessThan(0.15);
  });
});

describe("orderCandidates: provider.sort", () => {
  const priced = (id: string, usd: string) => ({ ...cand(id, 0), mapping: { providerId: id, externalId: "m", pricing: { prompt: usd, completion: usd }, maxOutput: 1000 } }) as unknown as Candidate;
  const [a, b, c] = [priced("a", "0.000003"), priced("b", "0.000001"), priced("c", "0.000002")];
  const stats: Record<string, RouteStats> = {
    a: { uptime: 1, throughput: 300, latencyMs: 400, samples: 100 },
    b: { uptime: 1, throughput: 100, latencyMs: 200, samples: 100 },
    c: { uptime: 1, throughput: 200, latencyMs: null, samples: 100 },
  };
  const order = (sort: "price" | "throughput" | "latency") =>
    ids(orderCandidates([a, b, c], { ...needs, preferences: { sort } }, { noFallback: false, explorationRate: 0.5, pinnedProbeRate: 0, random: () => 0, stats: (x) => stats[x.providerId]! }));

  it("replaces smart ranking by the one value asked for: price ascending, throughput descending, latency ascending (unknown last)", () => {
    expect(order("price")).toEqual(["b", "c", "a"]);
    expect(order("throughput")).toEqual(["a", "c", "b"]);
    expect(order("latency")).toEqual(["b", "a", "c"]);
  });
});

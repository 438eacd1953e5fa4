import { describe, expect, it } from "vitest";
import { explorationRate, rank, scoreAll, type RouteStats, type ScoreInput } from "./score";

const healthy: RouteStats = { uptime: 1, throughput: null, latencyMs: null };
const item = (name: string, cost: bigint, stats: RouteStats = healthy, cacheable = false) => ({ name, input: { cost, stats, cacheable } satisfies ScoreInput });

describe("score", () => {
  it("prefers the cheaper of two equally healthy providers", () => {
    const order = rank([item("pricey", 200n), item("cheap", 100n)], (i) => i.input, { explorationRate: 0 });
    expect(order.map((i) => i.name)).toEqual(["cheap", "pricey"]);
  });

  it("penalises uptime below 95% so a cheap but failing provider loses", () => {
    const order = rank([item("cheap-flaky", 100n, { ...healthy, uptime: 0.8 }), item("pricey", 150n)], (i) => i.input, { explorationRate: 0 });
    expect(order.map((i) => i.name)).toEqual(["pricey", "cheap-flaky"]);
  });

  it("uses latency and throughput when prices are equal", () => {
    const fast = item("fast", 100n, { uptime: 1, throughput: 200, latencyMs: 100 });
    const slow = item("slow", 100n, { uptime: 1, throughput: 50, latencyMs: 800 });
    expect(rank([slow, fast], (i) => i.input, { explorationRate: 0 }).map((i) => i.name)).toEqual(["fast", "slow"]);
  });

  it("rewards prompt caching for long prompts", () => {
    const [a, b] = scoreAll([item("x", 100n, healthy, true).input, item("y", 100n, healthy, false).input]);
    expect(a!).toBeGreaterThan(b!);
  });

  it("is deterministic without exploration and keeps catalogue order on ties", () => {
    const items = [item("a", 100n), item("b", 100n), item("c", 100n)];
    for (let i = 0; i < 5; i++) expect(rank(items, (x) => x.input, { explorationRate: 0 }).map((x) => x.name)).toEqual(["a", "b", "c"]);
  });

  it("explores a runner-up when the random draw is below the rate", () => {
    const items = [item("a", 100n), item("b", 200n), item("c", 300n)];
    const draws = [0.01, 0.99];
    const order = rank(items, (x) => x.input, { explorationRate: 0.05, random: () => draws.shift() ?? 0 });
    expect(order[0]!.name).toBe("c");
  });

  it("explores only runners-up short of evidence when told which are (per continent)", () => {
    const items = [item("a", 100n), item("b", 200n), item("c", 300n)];
    const measured = new Set(["b"]);
    const explore = (draws: number[]) =>
      rank(items, (x) => x.input, { explorationRate: 0.05, random: () => draws.shift() ?? 0, needsEvidence: (x) => !measured.has(x.name) })[0]!.name;
    // The draw that would have picked b picks the only unmeasured runner-up, c.
    expect(explore([0.01, 0.01])).toBe("c");
    measured.add("c");
    expect(explore([0.01, 0.01])).toBe("a");
  });

  it("reaches a runner-up that needs evidence even when it ranks below the top three", () => {
    const items = [item("a", 100n), item("b", 200n), item("c", 300n), item("d", 400n)];
    const explore = (draws: number[]) =>
      rank(items, (x) => x.input, { explorationRate: 0.05, random: () => draws.shift() ?? 0, needsEvidence: (x, leader) => leader.name === "a" && x.name === "d" })[0]!.name;
    expect(explore([0.01, 0.01])).toBe("d");
  });

  it("reads the exploration rate from the environment", () => {
    expect(explorationRate({ ENVIRONMENT: "test" })).toBe(0);
    expect(explorationRate({ ENVIRONMENT: "production" })).toBe(0.05);
    expect(explorationRate({ ENVIRONMENT: "production", ROUTING_EXPLORATION_RATE: "0.2" })).toBe(0.2);
  });
});

/**
 * Live metrics per caller continent: each continent's callers are ranked by what callers there
 * measured (network included), not by every caller's average. Two endpoints of one provider (the
 * organization's deepinfra keys with a region each); an Asian caller has both far away, so the
 * distance prior cannot tell them apart and only the continent's own evidence can.
 */
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, resetMetrics, useRegionalKeys, user } from "./helpers";
import { metricsWritesSettled, reportAttempts } from "../../src/routing/live-metrics";
import type { AttemptSample } from "../../src/routing/metrics";
import type { Continent } from "../../src/routing/regions";
import type { Candidate } from "../../src/routing/candidates";
import { EXPLORE_UNTIL_SAMPLES, needsEvidence } from "../../src/routing/candidate-stats";

const MODEL = "deepinfra/llama-3.3-70b-instruct";
const MODEL_ID = "llama-3.3-70b-instruct";
type Body = Record<string, any>;

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  // No base URL of their own: the provider's public endpoints (the fake upstream), whose metrics are shared.
  await useRegionalKeys(org, "deepinfra", ["us-east-1", "eu-west-1"]);
});
beforeEach(resetMetrics);

/** Attempts as callers on `continent` saw them: `ttftMs` per endpoint region. */
async function measured(continent: Continent | null, ttftByRegion: Record<string, number>, n = 6): Promise<void> {
  const now = Date.now();
  const samples: AttemptSample[] = [];
  for (const [region, ttftMs] of Object.entries(ttftByRegion)) {
    for (let i = 0; i < n; i++) samples.push({ provider: `deepinfra@${region}`, model: MODEL_ID, at: now, outcome: "ok", ttftMs, outputTokens: 20, generationMs: 200 });
  }
  const pending: Promise<unknown>[] = [];
  reportAttempts(env, (p) => pending.push(p), samples, continent);
  await Promise.all(pending);
  await metricsWritesSettled(env);
}

const ask = async (continent: string): Promise<Body> => {
  const res = await chat(org.key, { model: MODEL, messages: user(`hi ${crypto.randomUUID()}`) }, { "x-no-cache": "true", "x-debug-caller-continent": continent });
  expect(res.status).toBe(200);
  return (await res.json()) as Body;
};

describe("metrics per caller continent", () => {
  it("a continent's own measurements rank its callers' endpoints, whatever the other continents measured", async () => {
    // Many North American callers: us-east-1 fast, eu-west-1 slow. A few Asian callers: the reverse.
    await measured("NA", { "us-east-1": 60, "eu-west-1": 200 }, 20);
    await measured("AS", { "us-east-1": 400, "eu-west-1": 150 });
    expect((await ask("AS")).metadata.used_region).toBe("eu-west-1");
    expect((await ask("NA")).metadata.used_region).toBe("us-east-1");
  });

  it("the distance prior decides until the caller's continent has evidence", async () => {
    // Measured from North America only (eu-west-1 90 ms further away): a European caller still starts near.
    await measured("NA", { "us-east-1": 60, "eu-west-1": 150 }, 20);
    expect((await ask("EU")).metadata.used_region).toBe("eu-west-1");
  });

  it("a continent's failures rank its callers away from an endpoint, measured from there", async () => {
    const now = Date.now();
    const failures: AttemptSample[] = Array.from({ length: 8 }, () => ({ provider: "deepinfra@eu-west-1", model: MODEL_ID, at: now, outcome: "error", ttftMs: null, outputTokens: 0, generationMs: null }));
    const pending: Promise<unknown>[] = [];
    reportAttempts(env, (p) => pending.push(p), failures, "EU");
    await Promise.all(pending);
    await metricsWritesSettled(env);
    expect((await ask("EU")).metadata.used_region).toBe("us-east-1");
  });

  it("exploration measures a runner-up per continent until it has evidence there, and again while it looks unhealthy", async () => {
    const endpoint = { providerId: "deepinfra", modelId: MODEL_ID, credential: { source: "credits", providerId: "deepinfra", region: "eu-west-1" } } as unknown as Candidate;
    expect(needsEvidence(endpoint, "EU")).toBe(true);
    await measured("EU", { "eu-west-1": 100 }, EXPLORE_UNTIL_SAMPLES);
    expect(needsEvidence(endpoint, "EU")).toBe(false);
    // Measured from Europe only: Asia still needs its own evidence.
    expect(needsEvidence(endpoint, "AS")).toBe(true);
    const now = Date.now();
    const failures: AttemptSample[] = Array.from({ length: 4 }, () => ({ provider: "deepinfra@eu-west-1", model: MODEL_ID, at: now, outcome: "error", ttftMs: null, outputTokens: 0, generationMs: null }));
    reportAttempts(env, () => undefined, failures, "EU");
    expect(needsEvidence(endpoint, "EU")).toBe(true);
  });

  it("requests are recorded in their caller's continent's series as well as the global one", async () => {
    await ask("EU");
    await ask("EU");
    await metricsWritesSettled(env);
    const read = async (q: string): Promise<Body> => (await (await call(`/v1/providers/metrics${q}`)).json()) as Body;
    const eu = await read("?continent=EU");
    expect(eu.continent).toBe("EU");
    expect(eu.data).toEqual([expect.objectContaining({ provider: "deepinfra", region: "eu-west-1", model: MODEL_ID, requests: 2 })]);
    expect((await read("?continent=AS")).data).toEqual([]);
    expect((await read("")).data).toEqual(expect.arrayContaining([expect.objectContaining({ provider: "deepinfra", region: "eu-west-1", requests: 2 })]));
    const bad = await call("/v1/providers/metrics?continent=XX");
    expect(bad.status).toBe(400);
  });
});

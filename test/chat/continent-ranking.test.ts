/**
 * Ranking per caller continent through the gateway: three endpoints of one provider (the
 * organization's deepinfra keys with a region each, at paths of their own on the fake upstream:
 * us-east-1 in North America, eu-west-1 in Europe, ap-northeast-1 in Asia). Evidence measured on
 * other continents must not pull a caller away from its near endpoint before its own continent has
 * any, and failover goes to the next nearest region, not whichever another continent measured fastest.
 */
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, resetMetrics, useRegionalKeys, user } from "./helpers";
import { metricsWritesSettled, reportAttempts } from "../../src/routing/live-metrics";
import type { AttemptSample } from "../../src/routing/metrics";
import type { Continent } from "../../src/routing/regions";
import type { Candidate } from "../../src/routing/candidates";
import { EXPLORE_UNTIL_SAMPLES, needsEvidence } from "../../src/routing/candidate-stats";

const MODEL = "deepinfra/llama-3.3-70b-instruct";
const MODEL_ID = "llama-3.3-70b-instruct";
const PREFIX: Record<string, string> = { "us-east-1": "deepinfra-na", "eu-west-1": "deepinfra-eu", "ap-northeast-1": "deepinfra-as" };
const upstream = (prefix: string) => `${(env as unknown as { FAKE_UPSTREAM_URL: string }).FAKE_UPSTREAM_URL}/${prefix}`;
type Body = Record<string, any>;

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  await useRegionalKeys(org, "deepinfra", Object.entries(PREFIX).map(([region, prefix]) => ({ region, baseUrl: upstream(prefix) })));
});
beforeEach(resetMetrics);

/** Attempts callers on `continent` made: `ttftMs` per endpoint region (null: a failure). */
async function measured(continent: Continent, ttftByRegion: Record<string, number | null>, n: number): Promise<void> {
  const now = Date.now();
  const samples: AttemptSample[] = [];
  for (const [region, ttftMs] of Object.entries(ttftByRegion)) {
    for (let i = 0; i < n; i++) {
      samples.push({ provider: `deepinfra@${region}`, model: MODEL_ID, at: now, outcome: ttftMs === null ? "error" : "ok", ttftMs, outputTokens: ttftMs === null ? 0 : 20, generationMs: ttftMs === null ? null : 200 });
    }
  }
  const pending: Promise<unknown>[] = [];
  reportAttempts(env, (p) => pending.push(p), samples, continent);
  await Promise.all(pending);
  await metricsWritesSettled(env);
}

const ask = async (continent: string, text = "hi"): Promise<Body> => {
  const res = await chat(org.key, { model: MODEL, messages: user(`${text} ${crypto.randomUUID()}`) }, { "x-no-cache": "true", "x-debug-caller-continent": continent });
  expect(res.status).toBe(200);
  return (await res.json()) as Body;
};

describe("ranking per caller continent", () => {
  it("an endpoint measured only from another continent does not pull a caller away from its near one", async () => {
    // Europe measured its region; nobody measured North America's yet: unknown is not slower.
    await measured("EU", { "eu-west-1": 230 }, 10);
    expect((await ask("NA")).metadata.used_region).toBe("us-east-1");
  });

  it("a near endpoint measured slow early keeps being explored while a farther one leads", async () => {
    const endpoint = (region: string) => ({ providerId: "deepinfra", modelId: MODEL_ID, region, credential: { source: "byok", providerId: "deepinfra", region } }) as unknown as Candidate;
    await measured("NA", { "us-east-1": 900, "eu-west-1": 300, "ap-northeast-1": 400 }, EXPLORE_UNTIL_SAMPLES);
    // Enough samples of each: a farther runner-up behind the leader is measured enough...
    expect(needsEvidence(endpoint("ap-northeast-1"), "NA", endpoint("eu-west-1"))).toBe(false);
    // ...but the near one behind a far leader contradicts the region table: it stays in exploration.
    expect(needsEvidence(endpoint("us-east-1"), "NA", endpoint("eu-west-1"))).toBe(true);
  });

  it("failover inside a request goes to the next nearest region (Europe: North America before Asia)", async () => {
    await measured("NA", { "us-east-1": 240 }, 20);
    await measured("AS", { "ap-northeast-1": 200 }, 20);
    const body = await ask("EU", "x [[fake@deepinfra-eu:status=503]]");
    expect(body.metadata.routing.map((a: Body) => [a.region, a.succeeded])).toEqual([
      ["eu-west-1", false],
      ["us-east-1", true],
    ]);
  });

  it("once the near region failed, new requests start on the next nearest", async () => {
    await measured("NA", { "us-east-1": 240 }, 20);
    await measured("AS", { "ap-northeast-1": 200 }, 20);
    await measured("EU", { "eu-west-1": null }, 8);
    const body = await ask("EU");
    expect(body.metadata.routing).toEqual([expect.objectContaining({ region: "us-east-1", succeeded: true })]);
  });
});

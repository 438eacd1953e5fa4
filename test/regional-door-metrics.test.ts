/**
 * The doors' attempts (embeddings, images, moderations, video jobs) feed the live metrics as chat's
 * do (src/routing/door-samples.ts): under the endpoint's series (`openai@<region>`), globally and
 * for the caller's continent, so their regional endpoints rank by what callers measured and not by
 * the region table alone. The organization's openai keys serve two regions without base URLs of
 * their own (a BYOK key with its own base URL is that tenant's upstream and stays out of the shared
 * metrics, as for chat).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { useRegionalKeys } from "./chat/helpers";
import { continentStats, routeStats } from "../src/routing/live-metrics";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  await useRegionalKeys(org, "openai", ["eu-west-1", "us-east-1"]);
});

const post = (path: string, body: unknown) =>
  call(path, { method: "POST", key: org.key, ...json(body), headers: { "content-type": "application/json", "x-debug-caller-continent": "EU" } });

const EU_ENDPOINT = "openai@eu-west-1";

describe("door attempts in the live metrics", () => {
  const doors: Array<[string, string, Record<string, unknown>]> = [
    ["embeddings", "text-embedding-3-small", { model: "text-embedding-3-small", input: "hello" }],
    ["images/generations", "gpt-image-1", { model: "gpt-image-1", prompt: "a fox" }],
    ["moderations", "omni-moderation-latest", { model: "omni-moderation-latest", input: "hello" }],
    ["videos", "sora-2", { model: "sora-2", prompt: "a paper boat", seconds: "4" }],
  ];

  for (const [door, model, body] of doors) {
    it(`${door}: a European caller's attempt is recorded for Europe and globally, on the endpoint it used`, async () => {
      const before = { eu: continentStats("EU", EU_ENDPOINT, model).samples ?? 0, all: routeStats(EU_ENDPOINT, model).samples ?? 0 };
      const res = await post(`/v1/${door}`, body);
      expect(res.status, await res.clone().text()).toBe(200);
      await res.text();
      const eu = continentStats("EU", EU_ENDPOINT, model);
      expect(eu.samples).toBe(before.eu + 1);
      expect(eu.uptime).toBe(1);
      expect(eu.latencyMs).not.toBeNull();
      expect(routeStats(EU_ENDPOINT, model).samples).toBe(before.all + 1);
    });
  }

  it("a failed attempt counts against the endpoint's uptime for the caller's continent", async () => {
    const model = "text-embedding-3-large";
    const res = await post("/v1/embeddings", { model, input: "hello [[fake:status=503]]" });
    expect(res.status).toBeGreaterThanOrEqual(500);
    await res.text();
    const eu = continentStats("EU", EU_ENDPOINT, model);
    expect(eu.samples).toBe(1);
    // One failure beside the metrics' prior of one success.
    expect(eu.uptime).toBe(0.5);
  });
});

/**
 * Embeddings, images, moderations and videos get chat's regional endpoints, ranking per caller continent
 * and residency per endpoint (src/routing/door-endpoints.ts). The organization's openai keys serve
 * three regions (a key with a region adds that endpoint), each at a path of its own on the fake
 * upstream: us-east-1 (North America), eu-west-1 (Europe), ap-northeast-1 (Asia).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { useRegionalKeys } from "./chat/helpers";
import { recorded } from "./helpers/recorded";

const FAKE = (env as unknown as { FAKE_UPSTREAM_URL: string }).FAKE_UPSTREAM_URL;
const PREFIX: Record<string, string> = { "us-east-1": "openai-na", "eu-west-1": "openai-eu", "ap-northeast-1": "openai-as" };
type Body = Record<string, any>;

let org: SeededOrg;
let asiaOnlyKey: string;
beforeAll(async () => {
  org = await seedOrg();
  await useRegionalKeys(org, "openai", Object.entries(PREFIX).map(([region, prefix]) => ({ region, baseUrl: `${FAKE}/${prefix}` })));
  const key = await addKey(org);
  asiaOnlyKey = key.token;
  const rule = await call(`/v1/master/keys/${key.row.id}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "allow_regions", ruleValue: { regions: ["AS"] } }) });
  expect(rule.status).toBe(201);
});

const post = (path: string, body: unknown, continent: string, key = org.key) =>
  call(path, { method: "POST", key, ...json(body), headers: { "content-type": "application/json", "x-debug-caller-continent": continent } });
/** The regions (by fake-upstream path prefix) a tagged request reached, in order. */
const reached = async (tag: string): Promise<string[]> => {
  const sent = await recorded(tag);
  const byPrefix = Object.fromEntries(Object.entries(PREFIX).map(([r, p]) => [p, r]));
  return sent.map((s) => byPrefix[s.provider] ?? s.provider);
};
const regionsOf = (body: Body) => (body.metadata.routing as Body[]).map((a) => [a.region, a.succeeded]);

describe("embeddings: regional endpoints", () => {
  const embed = (input: string, continent: string, key?: string) => post("/v1/embeddings", { model: "text-embedding-3-small", input }, continent, key);

  it("a caller starts on its continent's endpoint", async () => {
    const eu = (await (await embed("hello", "EU")).json()) as Body;
    expect(eu.metadata.used_region).toBe("eu-west-1");
    const as = (await (await embed("hello", "AS")).json()) as Body;
    expect(as.metadata.used_region).toBe("ap-northeast-1");
  });

  it("fails over to the next nearest region (Europe: North America before Asia)", async () => {
    const res = await embed("hello [[fake@openai-eu:status=503]]", "EU");
    expect(res.status).toBe(200);
    expect(regionsOf((await res.json()) as Body)).toEqual([["eu-west-1", false], ["us-east-1", true]]);
  });

  it("residency is judged per endpoint: allow_regions AS serves a European caller from Asia", async () => {
    const res = await embed("hello", "EU", asiaOnlyKey);
    expect(res.status).toBe(200);
    expect(regionsOf((await res.json()) as Body)).toEqual([["ap-northeast-1", true]]);
  });
});

describe("images: regional endpoints", () => {
  const draw = (prompt: string, continent: string, key?: string) => post("/v1/images/generations", { model: "gpt-image-1", prompt }, continent, key);

  it("a caller starts on its continent's endpoint and fails over to the next nearest", async () => {
    const na = (await (await draw("a fox", "NA")).json()) as Body;
    expect(na.metadata.used_region).toBe("us-east-1");
    const res = await draw("a fox [[fake@openai-eu:status=503]]", "EU");
    expect(res.status).toBe(200);
    expect(regionsOf((await res.json()) as Body)).toEqual([["eu-west-1", false], ["us-east-1", true]]);
  });

  it("residency is judged per endpoint", async () => {
    const res = await draw("a fox", "NA", asiaOnlyKey);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).metadata.used_region).toBe("ap-northeast-1");
  });
});

describe("moderations: regional endpoints", () => {
  const moderate = (input: string, continent: string, key?: string) => post("/v1/moderations", { input }, continent, key);

  it("a caller starts on its continent's endpoint and fails over to the next nearest", async () => {
    const tag = crypto.randomUUID();
    expect((await moderate(`hello [[tag:${tag}]]`, "AS")).status).toBe(200);
    expect(await reached(tag)).toEqual(["ap-northeast-1"]);
    const failing = crypto.randomUUID();
    expect((await moderate(`hello [[tag:${failing}]] [[fake@openai-eu:status=503]]`, "EU")).status).toBe(200);
    expect(await reached(failing)).toEqual(["eu-west-1", "us-east-1"]);
  });

  it("residency is judged per endpoint", async () => {
    const tag = crypto.randomUUID();
    expect((await moderate(`hello [[tag:${tag}]]`, "EU", asiaOnlyKey)).status).toBe(200);
    expect(await reached(tag)).toEqual(["ap-northeast-1"]);
  });
});

describe("videos: regional endpoints", () => {
  const create = (prompt: string, continent: string, key?: string) => post("/v1/videos", { model: "sora-2", prompt, seconds: "4" }, continent, key);
  const usedRegion = async (logId: string) => (await env.DB.prepare("SELECT used_region FROM request_logs WHERE id = ?").bind(logId).first<{ used_region: string | null }>())?.used_region;

  it("a job goes to the caller's continent's endpoint, is recorded there, and is polled there", async () => {
    for (const [continent, region] of [["EU", "eu-west-1"], ["AS", "ap-northeast-1"]] as const) {
      const tag = crypto.randomUUID();
      const res = await create(`a paper boat [[tag:${tag}]]`, continent);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await reached(tag)).toEqual([region]);
      const job = (await res.json()) as Body;
      expect(await usedRegion(job.id as string)).toBe(region);
      // The job exists only at that endpoint (the fake answers 404 elsewhere).
      const polled = await call(`/v1/videos/${job.id}`, { key: org.key });
      expect(polled.status, await polled.clone().text()).toBe(200);
      expect(((await polled.json()) as Body).status).toBe("completed");
    }
  });

  it("residency is judged per endpoint: allow_regions AS sends a North American caller's job to Asia", async () => {
    const tag = crypto.randomUUID();
    const res = await create(`a paper boat [[tag:${tag}]]`, "NA", asiaOnlyKey);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await reached(tag)).toEqual(["ap-northeast-1"]);
  });
});

describe("the model listing", () => {
  it("lists a model whose default endpoint the key's residency excludes when one of its regional endpoints is allowed", async () => {
    // openai's default endpoint is in the US; the key may use only Asia, where the organization has a key.
    const models = (await (await call("/v1/models", { key: asiaOnlyKey })).json()) as Body;
    const ids = (models.data as Body[]).map((m) => m.id);
    expect(ids).toContain("text-embedding-3-small");
    expect(ids).toContain("omni-moderation-latest");
  });
});

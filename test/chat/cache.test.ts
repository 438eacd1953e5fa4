import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { projects } from "../../src/db/schema";
import { chat, readSse, resetMetrics, setProject, user, waitForLog } from "./helpers";
import { recorded } from "../helpers/recorded";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  // Caching is opt-in (a new project starts without it).
  await setProject(org.projectId, { cachingEnabled: true });
});
beforeEach(resetMetrics);

type Body = Record<string, any>;

/** First request, then wait for its log row (the cache write is queued before it finishes). */
async function prime(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  const res = await chat(key, body, headers);
  expect(res.status).toBe(200);
  const clone = res.clone();
  await clone.text();
  await waitForLog(res.headers.get("x-request-id")!);
  return res;
}

describe("response cache", () => {
  it("serves the second identical request from the cache with cost 0 and a cached log row", async () => {
    const body = { model: "gpt-4o-mini", temperature: 0, messages: user("cache me [[tag:cache-hit]]") };
    const first = (await (await prime(org.key, body)).json()) as Body;
    expect(first.metadata.cached).toBe(false);
    // Give the KV write (queued in the same waitUntil batch) a moment.
    let second: Body | null = null;
    let res: Response | null = null;
    for (let i = 0; i < 20; i++) {
      res = await chat(org.key, body);
      second = (await res.json()) as Body;
      if (second.metadata.cached) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(second!.metadata.cached).toBe(true);
    expect(second!.usage.cost).toBe(0);
    expect(second!.choices[0].message.content).toBe(first.choices[0].message.content);
    expect(second!.metadata.routing).toEqual([]);
    const log = await waitForLog(res!.headers.get("x-request-id")!);
    expect(log.cached).toBe(true);
    expect(log.costPico).toBe(0);
    expect((await recorded("cache-hit")).length).toBe(1);
  });

  it("never serves another project's answer", async () => {
    const body = { model: "gpt-4o-mini", messages: user("project scoped [[tag:cache-project]]") };
    await prime(org.key, body);
    await new Promise((r) => setTimeout(r, 100));
    const projectId = `proj_other${crypto.randomUUID().slice(0, 8)}`;
    await getDb(env.DB).insert(projects).values({ id: projectId, organizationId: org.orgId, name: "other", cachingEnabled: true });
    const other = await addKey(org, { projectId });
    const res = await chat(other.token, body);
    const json = (await res.json()) as Body;
    expect(json.metadata.cached).toBe(false);
    expect(json.metadata.project_id).toBe(projectId);
    expect((await recorded("cache-project")).length).toBe(2);
  });

  it("is bypassed by x-no-cache, a non-zero temperature and a project without caching", async () => {
    const body = { model: "gpt-4o-mini", messages: user("bypass [[tag:cache-bypass]]") };
    await prime(org.key, body);
    await new Promise((r) => setTimeout(r, 100));
    const noCache = (await (await chat(org.key, body, { "x-no-cache": "true" })).json()) as Body;
    expect(noCache.metadata.cached).toBe(false);
    const warm = (await (await chat(org.key, { ...body, temperature: 0.7 })).json()) as Body;
    expect(warm.metadata.cached).toBe(false);
    expect((await recorded("cache-bypass")).length).toBe(3);
  });

  it("replays a completed stream as a stream", async () => {
    const body = { model: "gpt-4o-mini", stream: true, messages: user("stream cache [[tag:cache-stream]]") };
    const first = await chat(org.key, body);
    const a = await readSse(first);
    await waitForLog(first.headers.get("x-request-id")!);
    await new Promise((r) => setTimeout(r, 100));
    const second = await chat(org.key, body);
    expect(second.headers.get("content-type")).toContain("text/event-stream");
    const b = await readSse(second);
    const text = (e: typeof a) =>
      e.events.filter((x): x is Body => x !== "[DONE]").flatMap((c) => c.choices).map((ch: Body) => ch.delta?.content ?? "").join("");
    expect(text(b)).toBe(text(a));
    expect(b.events.at(-1)).toBe("[DONE]");
    const usageChunk = b.events.at(-2) as Body;
    expect(usageChunk.metadata.cached).toBe(true);
    expect(usageChunk.usage.cost).toBe(0);
    expect((await recorded("cache-stream")).length).toBe(1);
  });

  it("never stores an incomplete stream", async () => {
    const body = { model: "gpt-4o-mini", stream: true, messages: user("cut short [[fake:truncate]] [[tag:cache-truncated]]") };
    const first = await chat(org.key, body);
    const a = await readSse(first);
    expect((a.events.at(-2) as Body).error).toBeDefined();
    await waitForLog(first.headers.get("x-request-id")!);
    await new Promise((r) => setTimeout(r, 100));
    const second = await chat(org.key, body);
    await readSse(second);
    expect((await recorded("cache-truncated")).length).toBe(2);
  });

  it("is off for a new organization's project, which has not turned it on", async () => {
    const seeded = await seedOrg();
    const body = { model: "gpt-4o-mini", messages: user("no caching here [[tag:cache-disabled]]") };
    await prime(seeded.key, body);
    await new Promise((r) => setTimeout(r, 100));
    const again = (await (await chat(seeded.key, body)).json()) as Body;
    expect(again.metadata.cached).toBe(false);
    expect((await recorded("cache-disabled")).length).toBe(2);
  });
});

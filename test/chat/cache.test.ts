import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
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

  it("replays a fallback model's answer under the fallback's id, on every door, streamed or not, with a record that agrees", async () => {
    const MODEL = "llama-3.3-70b-instruct";
    // groq (pinned) fails, so gpt-4o-mini from `models` serves and its answer is cached.
    const fail = () => `fallback cache ${crypto.randomUUID()} [[fake@groq:status=500]]`;
    const base = { model: `groq/${MODEL}`, models: ["gpt-4o-mini"], temperature: 0 };
    const door = { chat: "/v1/chat/completions", messages: "/v1/messages", responses: "/v1/responses" } as const;
    const bodyOf = (d: keyof typeof door, text: string, stream: boolean): Record<string, unknown> =>
      d === "chat" ? { ...base, stream, messages: user(text) }
      : d === "messages" ? { ...base, stream, max_tokens: 50, messages: [{ role: "user", content: text }] }
      : { ...base, stream, input: text };
    const send = (d: keyof typeof door, text: string, stream: boolean) => call(door[d], { method: "POST", key: org.key, ...json(bodyOf(d, text, stream)) });
    /** Every `model` the answer names: the JSON's, or each stream event's (chunks, message_start, response.*). */
    const modelsNamed = async (res: Response): Promise<string[]> => {
      if (!res.headers.get("content-type")?.includes("text/event-stream")) {
        const b = (await res.json()) as Body;
        return [b.model];
      }
      return (await readSse(res)).events.flatMap((e) => {
        if (e === "[DONE]") return [];
        const named = (e.model ?? (e.message as Body | undefined)?.model ?? (e.response as Body | undefined)?.model) as string | undefined;
        return named ? [named] : [];
      });
    };
    for (const d of Object.keys(door) as (keyof typeof door)[]) {
      for (const stream of [false, true]) {
        // groq's failures so far would rank it down (even as the pinned provider): each round starts afresh.
        await resetMetrics();
        const text = fail();
        const first = await send(d, text, stream);
        expect(first.status).toBe(200);
        expect(new Set(await modelsNamed(first)), `first ${d} stream=${stream}`).toEqual(new Set(["gpt-4o-mini"]));
        await waitForLog(first.headers.get("x-request-id")!);
        let log: Awaited<ReturnType<typeof waitForLog>> | null = null;
        let named: string[] = [];
        for (let i = 0; i < 20 && !log?.cached; i++) {
          if (i > 0) await new Promise((r) => setTimeout(r, 50));
          const again = await send(d, text, stream);
          named = await modelsNamed(again);
          log = await waitForLog(again.headers.get("x-request-id")!);
        }
        expect(log?.cached, `${d} stream=${stream}`).toBe(true);
        expect(named.length, `${d} stream=${stream}`).toBeGreaterThan(0);
        expect(new Set(named), `${d} stream=${stream}`).toEqual(new Set(["gpt-4o-mini"]));
        expect([log!.requestedModel, log!.usedModel]).toEqual([`groq/${MODEL}`, "gpt-4o-mini"]);
      }
    }
  });

  it("replays the requested model's answer under the caller's request, not a fallback's", async () => {
    const body = { model: "gpt-4o-mini", models: ["llama-3.3-70b-instruct"], messages: user(`own model ${crypto.randomUUID()}`) };
    await prime(org.key, body);
    let again: Body | null = null;
    for (let i = 0; i < 20 && !again?.metadata.cached; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      again = (await (await chat(org.key, body)).json()) as Body;
    }
    expect(again!.metadata.cached).toBe(true);
    expect([again!.model, again!.metadata.used_model]).toEqual(["gpt-4o-mini", "gpt-4o-mini"]);
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

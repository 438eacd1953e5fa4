/**
 * Breadth that works: `GET /v1/models?mapped=true` lists at least 250 models and 500 provider
 * mappings, and every listed mapping answers when asked by its `provider/model` id through the
 * stand-in upstream (test/fake-upstream), on the endpoint of its kind.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg({ creditsUsd: 10_000 });
});

interface Entry {
  id: string;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  providers?: Array<{ providerId: string }>;
  kind?: string;
}

function requestFor(id: string, kind: string): [string, Record<string, unknown>] {
  switch (kind) {
    case "embedding":
      return ["/v1/embeddings", { model: id, input: "hello" }];
    case "image":
      return ["/v1/images/generations", { model: id, prompt: "a paper boat" }];
    case "moderation":
      return ["/v1/moderations", { model: id, input: "hello" }];
    case "video":
      return ["/v1/videos", { model: id, prompt: "a paper boat on a river" }];
    default:
      return ["/v1/chat/completions", { model: id, messages: [{ role: "user", content: "hello" }], max_tokens: 16 }];
  }
}

describe("the catalogue's breadth is callable", () => {
  it("GET /v1/models?mapped=true lists >= 250 models and >= 500 mappings, and each answers through the stand-in", async () => {
    const res = await call("/v1/models?mapped=true", { key: org.key });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Entry[] };
    const pinned = data.filter((e) => e.id.includes("/"));
    const models = new Set(pinned.map((e) => e.id.slice(e.id.indexOf("/") + 1)));
    expect(models.size).toBeGreaterThanOrEqual(250);
    expect(pinned.length).toBeGreaterThanOrEqual(500);

    const failures: string[] = [];
    const BATCH = 8;
    for (let i = 0; i < pinned.length; i += BATCH) {
      await Promise.all(
        pinned.slice(i, i + BATCH).map(async (e) => {
          // A conversational image model (gemini-2.5-flash-image) is served by chat on every mapping.
          const chats = e.kind === "image" && e.architecture.output_modalities.includes("text");
          const [path, body] = requestFor(e.id, chats ? "chat" : (e.kind ?? "chat"));
          const r = await call(path, { method: "POST", key: org.key, ...json(body) });
          if (r.status >= 300) failures.push(`${e.id} ${path} ${r.status} ${(await r.text()).slice(0, 200)}`);
          else await r.arrayBuffer();
        }),
      );
    }
    expect(failures).toEqual([]);
  }, 600_000);
});

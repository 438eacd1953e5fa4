/**
 * Every model the catalogue lists is one the gateway serves. A video or image model
 * whose provider has no generation adapter was listed (veo-3.0-generate on google-vertex) while
 * POST /v1/videos answered 400 model_not_supported; it stays out of every listing until it is served.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { canChat, listModels, modelsByKind } from "../src/catalog";
import { videoAdapterFor } from "../src/generation/video";
import { imageAdapterFor } from "../src/generation/providers";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

describe("the catalogue lists only what the gateway serves", () => {
  it("every mapping of a video model has a video adapter; an image model's, an image adapter unless the model chats", () => {
    const unserved: string[] = [];
    for (const m of modelsByKind("video")) for (const map of m.mappings) if (!videoAdapterFor(map.providerId)) unserved.push(`${map.providerId}/${m.id}`);
    // A conversational image model (gemini-2.5-flash-image) is served by chat on every mapping.
    for (const m of modelsByKind("image")) for (const map of m.mappings) if (!imageAdapterFor(map.providerId) && !canChat(m)) unserved.push(`${map.providerId}/${m.id}`);
    expect(unserved).toEqual([]);
    expect(listModels().some((m) => m.id.startsWith("veo-"))).toBe(false);
  });

  it("GET /v1/models lists no Veo, and every video model it lists is accepted by POST /v1/videos", async () => {
    const res = await call("/v1/models?include_restricted=true", { key: org.key });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Array<{ id: string; architecture: { output_modalities: string[] } }> };
    expect(data.filter((m) => /veo/i.test(m.id))).toEqual([]);
    const videos = data.filter((m) => m.architecture.output_modalities.includes("video"));
    expect(videos.length).toBeGreaterThan(0);
    for (const m of videos) {
      const created = await call("/v1/videos", { method: "POST", key: org.key, ...json({ model: m.id, prompt: "a paper boat on a river" }) });
      const body = (await created.json()) as { error?: { code?: string } };
      expect(body.error?.code, m.id).not.toBe("model_not_supported");
      expect(created.status, `${m.id}: ${JSON.stringify(body)}`).toBeLessThan(300);
    }
  });
});

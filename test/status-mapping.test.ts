/**
 * One status mapping across chat, moderations and images (docs/api-shapes.md):
 * - a model id the gateway does not know: 400 invalid_request_error, code model_not_found, param model;
 * - an upstream refusing the request itself (non-retryable 4xx): its status kept, code upstream_<status>.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ creditsUsd: 10 });
});

type ErrorBody = { error: { type: string; code: string; param: string | null } };
const post = (path: string, body: unknown) => call(path, { method: "POST", key: org.key, ...json(body) });

describe("status mapping", () => {
  it("model_not_found is 400 with param 'model' on chat, moderations and images", async () => {
    const answers = [
      await post("/v1/chat/completions", { model: "no-such-model-xyz", messages: [{ role: "user", content: "hi" }] }),
      await post("/v1/moderations", { model: "no-such-model-xyz", input: "hi" }),
      await post("/v1/images/generations", { model: "no-such-model-xyz", prompt: "hi" }),
    ];
    for (const res of answers) {
      expect(res.status, res.url).toBe(400);
      const { error } = (await res.json()) as ErrorBody;
      expect(error).toMatchObject({ type: "invalid_request_error", code: "model_not_found", param: "model" });
    }
  });

  it("an upstream 404 is 404 (not_found_error, upstream_404) on chat, moderations and images", async () => {
    const tag = `[[fake:status=404]] ${crypto.randomUUID()}`;
    const answers = [
      await post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: tag }] }),
      await post("/v1/moderations", { model: "omni-moderation-latest", input: tag }),
      await post("/v1/images/generations", { model: "gpt-image-1", prompt: tag }),
    ];
    for (const res of answers) {
      const body = (await res.json()) as ErrorBody;
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(body.error).toMatchObject({ type: "not_found_error", code: "upstream_404" });
    }
  });

  it("an upstream 400 is 400 (upstream_400) everywhere", async () => {
    const tag = `[[fake:status=400]] ${crypto.randomUUID()}`;
    const answers = [
      await post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: tag }] }),
      await post("/v1/moderations", { model: "omni-moderation-latest", input: tag }),
      await post("/v1/images/generations", { model: "gpt-image-1", prompt: tag }),
    ];
    for (const res of answers) {
      const body = (await res.json()) as ErrorBody;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error).toMatchObject({ type: "invalid_request_error", code: "upstream_400" });
    }
  });
});

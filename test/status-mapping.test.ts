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

  for (const [status, type] of [[404, "not_found_error"], [400, "invalid_request_error"]] as const) {
    it(`an upstream ${status} is ${status} (${type}, upstream_${status}) on chat, moderations and images`, async () => {
      const tag = `[[fake:status=${status}]] ${crypto.randomUUID()}`;
      const answers = [
        await post("/v1/chat/completions", { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: tag }] }),
        await post("/v1/moderations", { model: "omni-moderation-latest", input: tag }),
        await post("/v1/images/generations", { model: "gpt-image-1", prompt: tag }),
      ];
      for (const res of answers) {
        const body = (await res.json()) as ErrorBody;
        expect(res.status, JSON.stringify(body)).toBe(status);
        expect(body.error).toMatchObject({ type, code: `upstream_${status}` });
      }
    });
  }
});

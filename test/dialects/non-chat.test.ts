import { beforeAll, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user, waitForLog } from "../chat/helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("chat refuses models that cannot chat", () => {
  for (const [model, endpoint] of [
    ["text-embedding-3-small", "/v1/embeddings"],
    ["omni-moderation-latest", "/v1/moderations"],
    ["gpt-image-1", "/v1/images/generations"],
    ["openai/sora-2", "/v1/videos"],
  ] as const) {
    it(`${model}: 400 naming model, nothing sent upstream, nothing billed`, async () => {
      const res = await chat(org.key, { model, messages: user(`hi [[tag:nonchat-${model}]]`) });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { param: string; code: string; message: string } };
      expect(body.error).toMatchObject({ param: "model", code: "model_not_chat" });
      expect(body.error.message).toContain(endpoint);
      const log = await waitForLog(res.headers.get("x-request-id")!);
      expect(log.statusCode).toBe(400);
      expect(log.costPico).toBe(0);
    });
  }

  it("still lets a conversational image model chat", async () => {
    const res = await chat(org.key, { model: "gemini-2.5-flash-image", messages: user("draw") });
    expect(res.status).toBe(200);
  });
});

/**
 * Names of Object.prototype members (`constructor`, `__proto__`, ...) from callers and upstreams
 * are plain names: an upstream finish_reason so named is an unknown reason (stop), and an image
 * URL ending in `.constructor` gets the default MIME type.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chatDirect as chat, parseSse, waitForLogs, type Json } from "./helpers";
import { recorded } from "../helpers/recorded";
import { MODEL } from "./hostile-input";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ plan: "enterprise" });
});

describe("names of Object.prototype members from callers and upstreams", { timeout: 60_000 }, () => {
  const NAMES = ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"];

  it("an upstream finish_reason named after an Object.prototype member is an unknown reason: stop in the answer, the stream and the log row", async () => {
    const ids: string[] = [];
    for (const name of NAMES) {
      const body = { model: MODEL, messages: [{ role: "user", content: `hi [[fake:finish=${name}]]` }] };
      const res = await chat(org.key, body);
      const text = await res.text();
      expect(res.status, `${name}: ${text}`).toBe(200);
      expect((JSON.parse(text) as Json).choices[0].finish_reason, name).toBe("stop");
      ids.push(res.headers.get("x-request-id")!);

      const streamed = await chat(org.key, { ...body, stream: true });
      expect(streamed.status, name).toBe(200);
      const finishes = parseSse(await streamed.text()).flatMap((e) => (e === "[DONE]" ? [] : ((e.choices ?? []) as Json[]).map((c) => c.finish_reason)));
      expect(finishes.filter((f) => f !== null), name).toEqual(["stop"]);
      ids.push(streamed.headers.get("x-request-id")!);
    }
    const rows = await waitForLogs(ids);
    expect(ids.map((id) => rows.find((r) => r.requestId === id)?.finishReason)).toEqual(ids.map(() => "stop"));
  });

  it("a caller's image URL ending in .constructor reaches Gemini with the default MIME type", async () => {
    const tag = `proto-mime-${crypto.randomUUID()}`;
    const url = "https://img.example/cat.constructor";
    const res = await chat(org.key, {
      model: "google-ai-studio/gemini-2.5-flash",
      messages: [{ role: "user", content: [{ type: "text", text: `look [[tag:${tag}]]` }, { type: "image_url", image_url: { url } }] }],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const sent = await recorded<Json>(tag);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.contents[0].parts[1]).toEqual({ fileData: { mimeType: "image/jpeg", fileUri: url } });
  });
});

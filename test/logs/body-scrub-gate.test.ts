/**
 * The consumer stores a body's JSON text unparsed when nothing in it could be a secret
 * (mayHoldSecret): every text scrubbing would change must pass that gate, escaped spellings
 * included, and what is stored never holds the secret.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { mayHoldSecret, scrubValue } from "../../src/usage/redact";
import { readBodies, storeBodies, type BodyEntry } from "../../src/usage/bodies";

const a40 = "a".repeat(40);
const SECRETS = [`swb_${a40}`, `swbm_${a40}`, `sk_${a40}`, "sk-proj-abcdefghijklmnopqrstuvwx", "sk-ant-abcdefghijklmnopqrstuvwx", `AIza${"b".repeat(35)}`, "gsk_abcdefghijklmnopqrstu", "xai-abcdefghijklmnopqrstu", "AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "Bearer abcdefghijklmnopqrstuvwxyz", "bearer abcdefghijklmnopqrstuvwxyz"];
const FIELDS = ["authorization", "Proxy-Authorization", "x-api-key", "api_key", "api-key", "apiKey", "access_token", "access-token", "secret", "client_secret", "password"];
/** JSON texts spelling a character as `\uXXXX`, which JSON.parse turns back into the secret. */
const escaped = (text: string) => text.replace(/[a-z]/, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);

describe("bodies stored without a parse", () => {
  it("lets no text through that scrubbing would change", () => {
    const texts = [
      ...SECRETS.map((s) => JSON.stringify({ messages: [{ role: "user", content: `here: ${s} ok` }] })),
      ...FIELDS.map((f) => JSON.stringify({ metadata: { [f]: "value-kept-secret" } })),
      ...SECRETS.map((s) => escaped(JSON.stringify(s))),
      ...FIELDS.map((f) => `{${escaped(JSON.stringify(f))}:"value-kept-secret"}`),
    ];
    for (const text of texts) {
      const parsed: unknown = JSON.parse(text);
      expect(JSON.stringify(scrubValue(parsed, false))).not.toBe(JSON.stringify(parsed));
      expect(mayHoldSecret(text), text).toBe(true);
    }
    expect(mayHoldSecret(JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello, my address is bench@example.test" }] }))).toBe(false);
  });

  it("stores an escaped secret scrubbed, and a plain body as it came", async () => {
    const createdAt = Date.now();
    const entry = (logId: string, request: string): BodyEntry => ({ logId, requestId: `req_${logId}`, organizationId: "org_gate", projectId: "prj_gate", createdAt, redact: false, request: { text: request, truncated: false }, response: { text: '{"choices":[]}', truncated: false } });
    const secret = "sk-proj-abcdefghijklmnopqrstuvwx";
    await storeBodies(env, [{ batch: "bb_gate", part: 0, first: 0, bodies: [entry("log_gate1", `{"messages":[{"content":${escaped(JSON.stringify(secret))}}],"${escaped("authorization")}":"x"}`), entry("log_gate2", '{"messages":[{"content":"hi"}]}')] }]);
    const read = (id: string) => readBodies(env, { organizationId: "org_gate", id, createdAt, extra: { bodyBatch: "bb_gate" } });
    const first = await read("log_gate1");
    expect(JSON.stringify(first)).not.toContain(secret.slice(3));
    expect(first?.requestBody).toEqual({ messages: [{ content: "[secret]" }], authorization: "[secret]" });
    expect((await read("log_gate2"))?.requestBody).toEqual({ messages: [{ content: "hi" }] });
  });
});

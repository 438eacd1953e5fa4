/**
 * Bad input on the chat route: random, hostile and malformed bodies, model ids, content types and
 * X-Forwarded-For values. The answer is always a 4xx with the error envelope
 * `{error:{message,type,param,code}}` (or a normal answer where the input happened to be valid):
 * never a 500, never a stack trace.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chatRequestSchema } from "../../src/routes/chat/schema";
import { callDirect as call, chatDirect as chat, expectEnvelope, expectNoStack, masterDirect as master, type Json } from "./helpers";
import { deepArray, deepObject, expectOkOrEnvelope, HOSTILE_STRINGS, isJson, MODEL, RUNS, valid } from "./hostile-input";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ plan: "enterprise" });
});

describe("chat: hostile bodies", { timeout: 60_000 }, () => {
  it("random JSON values are a 400 envelope", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const res = await chat(org.key, JSON.stringify(value));
        const body = await expectEnvelope(res, 400);
        expect(body.error.type).toBe("invalid_request_error");
      }),
      RUNS,
    );
  });

  it("random text that is not JSON is a 400 envelope", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200 }), async (text) => {
        fc.pre(!isJson(text));
        const res = await chat(org.key, text);
        const body = await expectEnvelope(res, 400);
        expect(body.error.code).toBe("invalid_json");
      }),
      RUNS,
    );
  });

  it("random objects around a valid model and messages never break the route", async () => {
    const base = valid();
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...Object.keys(chatRequestSchema.shape)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), async (extra) => {
        const res = await chat(org.key, { ...base, ...extra, stream: false });
        await expectOkOrEnvelope(res);
      }),
      { numRuns: 40 },
    );
  });

  it("a wrong type in any field is a 400 naming the field", async () => {
    const wrong: unknown[] = [123, -1, 1.5, "str", "", true, [], [null], {}, { a: 1 }];
    const failures: string[] = [];
    // An unknown model: bodies that pass validation stop at the model lookup (404), not upstream.
    const base = { model: "no-such-model-for-types", messages: [{ role: "user", content: "hi" }] };
    for (const field of Object.keys(chatRequestSchema.shape)) {
      for (const value of wrong) {
        const res = await chat(org.key, { ...base, [field]: value });
        const text = await res.text();
        expectNoStack(text);
        if (res.status === 404 && field !== "model") continue; // valid value (e.g. `user: "str"`), unknown model
        if (res.status >= 500) failures.push(`${field}=${JSON.stringify(value)} -> ${res.status} ${text.slice(0, 200)}`);
        const body = JSON.parse(text) as Json;
        expect(body.error, text).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
        if (res.status === 400 && body.error.code === "invalid_request" && body.error.param !== null) {
          expect(String(body.error.param).split(".")[0], `${field}=${JSON.stringify(value)}: ${text}`).toBe(field);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it("10k levels of nesting: as the body, as content, and inside tool parameters", async () => {
    for (const raw of [deepArray(10_000), deepObject(10_000)]) await expectEnvelope(await chat(org.key, raw), 400);
    const asContent = `{"model":"${MODEL}","messages":[{"role":"user","content":${deepArray(10_000)}}]}`;
    const body = await expectEnvelope(await chat(org.key, asContent), 400);
    expect(body.error.param).toMatch(/^messages/);
    // Accepted by the schema (parameters is a free-form object): the gateway must still answer sanely.
    const inTool = `{"model":"${MODEL}","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"p":${deepObject(10_000)}}}}]}`;
    const res = await chat(org.key, inTool);
    expect(res.status, (await res.clone().text()).slice(0, 300)).toBeLessThan(500);
    await expectOkOrEnvelope(res);
  });

  it("huge strings: under the body limit a clear answer, over it a 413", async () => {
    const big = "word ".repeat(1_800_000); // 9 MB: far beyond every context window of the model
    const res = await chat(org.key, { model: MODEL, messages: [{ role: "user", content: big }] });
    expect(res.status).toBeLessThan(500);
    await expectOkOrEnvelope(res);
    const tooBig = await chat(org.key, { model: MODEL, messages: [{ role: "user", content: "x".repeat(11 * 1024 * 1024) }] });
    const err = await expectEnvelope(tooBig, 413);
    expect(err.error.code).toBe("request_too_large");
    const longModel = await chat(org.key, { model: "m".repeat(200_000), messages: [{ role: "user", content: "x" }] });
    const e = await expectEnvelope(longModel, [400, 404]);
    expect(JSON.stringify(e).length).toBeLessThan(5000);
  });

  it("invalid UTF-8 bytes in the body", async () => {
    const enc = new TextEncoder();
    const parts = [enc.encode(`{"model":"${MODEL}","messages":[{"role":"user","content":"a`), new Uint8Array([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), enc.encode('"}]}')];
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      bytes.set(p, o);
      o += p.length;
    }
    const res = await call("/v1/chat/completions", { method: "POST", key: org.key, body: bytes, headers: { "content-type": "application/json" } });
    await expectOkOrEnvelope(res);
    const badModel = new Uint8Array([...enc.encode('{"model":"'), 0xff, 0xc0, 0x80, ...enc.encode('","messages":[{"role":"user","content":"x"}]}')]);
    await expectEnvelope(await call("/v1/chat/completions", { method: "POST", key: org.key, body: badModel, headers: { "content-type": "application/json" } }));
    const garbage = crypto.getRandomValues(new Uint8Array(4096));
    await expectEnvelope(await call("/v1/chat/completions", { method: "POST", key: org.key, body: garbage, headers: { "content-type": "application/json" } }), 400);
  });

  it("wrong content types and empty bodies", async () => {
    await expectEnvelope(await call("/v1/chat/completions", { method: "POST", key: org.key, body: JSON.stringify(valid()), headers: { "content-type": "text/plain" } }), 400);
    await expectEnvelope(await call("/v1/chat/completions", { method: "POST", key: org.key, body: "", headers: { "content-type": "application/json" } }), 400);
    await expectEnvelope(await call("/v1/chat/completions", { method: "POST", key: org.key }), 400);
  });

  it("hostile model ids are a 4xx envelope", async () => {
    for (const model of [...HOSTILE_STRINGS.filter(Boolean), "openai/", "/gpt-4o-mini", "custom:x/y", "a/b/c/d", "openai//gpt-4o-mini"]) {
      const res = await chat(org.key, { model, messages: [{ role: "user", content: "x" }] });
      await expectEnvelope(res, [400, 403, 404]);
    }
  });

  it("hostile X-Forwarded-For values never break the route (no IP rule: served)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 100 }), fc.constantFrom(...HOSTILE_STRINGS.filter((s) => !/[\r\n\u0000]/.test(s)), "::ffff:10.0.0.1", "1.2.3.4, 5.6.7.8", "[::1]:80", "999.999.999.999", "0x7f.1", ",,,")), async (xff) => {
        fc.pre(!/[\r\n\u0000]/.test(xff) && [...xff].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) < 0x7f));
        const res = await chat(org.key, valid(), { "x-forwarded-for": xff });
        expect(res.status).toBe(200);
        await res.body?.cancel();
      }),
      { numRuns: 30 },
    );
  });

  it("hostile X-Forwarded-For values with an IP allow rule: 403 unless the first entry matches", async () => {
    const created = (await (
      await master(org.masterKey, "POST", "/keys", {
        projectId: org.projectId,
        description: "ip rule",
        iamRules: [{ ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["203.0.113.0/24"] } }],
      })
    ).json()) as Json;
    const key = created.apiKey.token as string;
    expect((await chat(key, valid(), { "x-forwarded-for": "203.0.113.7" })).status).toBe(200);
    for (const xff of ["", "garbage", "203.0.113", "203.0.113.7.1", "::ffff:203.0.113.7x", "1.2.3.4, 203.0.113.7", " , 203.0.113.7", "0xcb.0.113.7", "203.000.113.007", "[203.0.113.7]", "x".repeat(4000)]) {
      const res = await chat(key, valid(), xff ? { "x-forwarded-for": xff } : {});
      const body = await expectEnvelope(res, 403);
      expect(body.error.code).toBe("permission_denied");
    }
  });
});

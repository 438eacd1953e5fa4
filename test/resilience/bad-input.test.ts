/**
 * Bad input: random, hostile and malformed requests
 * against the chat route, the master and bootstrap APIs, MCP, models and health. The answer is
 * always a 4xx with the error envelope `{error:{message,type,param,code}}` (a JSON-RPC error for
 * MCP): never a 500, never a stack trace, never a partial write.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { count, eq } from "drizzle-orm";
import { seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, customModels, customProviders, iamRules, members, organizations, projects, providerKeys, teams } from "../../src/db/schema";
import { chatRequestSchema } from "../../src/routes/chat/schema";
import { callDirect as call, chatDirect as chat, expectEnvelope, expectNoStack, masterDirect as master, parseSse, waitForLogs, type Json } from "./helpers";
import { readRpc } from "../mcp/helpers";
import { recorded } from "../helpers/recorded";

const RUNS = { numRuns: 80 };
const MODEL = "llama-3.3-70b-instruct";
const valid = (): Json => ({ model: MODEL, messages: [{ role: "user", content: "hi" }] });

let org: SeededOrg;
let freeOrg: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ plan: "enterprise" });
  freeOrg = await seedOrg({ plan: "free" });
});

/** 2xx is acceptable only where the generated body happened to be valid; otherwise a 4xx envelope. */
async function expectOkOrEnvelope(res: Response): Promise<void> {
  if (res.status < 300) {
    expectNoStack(await res.text());
    return;
  }
  await expectEnvelope(res);
}

const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Strings that have hurt parsers, routers and SQL layers before. */
const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "../../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f",
  "openai/../anthropic/claude",
  "openai%2Fgpt-4o-mini",
  "'; DROP TABLE api_keys; --",
  '" OR 1=1 --',
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "__proto__",
  "constructor",
  "\ud800",
  "😀".repeat(50),
  "x".repeat(5000),
  "\r\nX-Injected: 1",
];

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

const isJson = (s: string): boolean => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

async function countRows(table: typeof projects | typeof apiKeys | typeof iamRules | typeof members | typeof teams | typeof providerKeys | typeof customProviders | typeof customModels | typeof organizations): Promise<number> {
  const row = await getDb(env.DB).select({ n: count() }).from(table).get();
  return row?.n ?? 0;
}

describe("master API: hostile bodies leave no trace", { timeout: 60_000 }, () => {
  const endpoints: Array<{ name: string; path: string; table: Parameters<typeof countRows>[0] }> = [
    { name: "projects", path: "/projects", table: projects },
    { name: "keys", path: "/keys", table: apiKeys },
    { name: "members", path: "/members", table: members },
    { name: "teams", path: "/teams", table: teams },
    { name: "provider keys", path: "/provider-keys", table: providerKeys },
    { name: "custom providers", path: "/custom-providers", table: customProviders },
    { name: "custom models", path: "/custom-models", table: customModels },
  ];

  it.each(endpoints)("POST $name with random JSON", async ({ path, table }) => {
    const before = await countRows(table);
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        const res = await master(org.masterKey, "POST", path, JSON.stringify(value));
        if (res.status === 201) {
          created++;
          return;
        }
        await expectEnvelope(res, [400, 404, 409, 422]);
      }),
      { numRuns: 50 },
    );
    expect(await countRows(table)).toBe(before + created);
  });

  it("wrong types in every field of a key creation: no key row", async () => {
    const base = { projectId: org.projectId, description: "typed" };
    const fields = ["projectId", "description", "memberId", "kind", "usageLimit", "periodUsageLimit", "periodUsageDurationValue", "periodUsageDurationUnit", "iamRules"];
    const before = await countRows(apiKeys);
    for (const field of fields) {
      for (const value of [123, -1, true, {}, [{}], "", "x".repeat(10_000), null]) {
        if (field === "description" && (value === "" || value === null)) continue;
        const res = await master(org.masterKey, "POST", "/keys", { ...base, [field]: value });
        if (res.status === 201) {
          // Legitimate (e.g. clearing an optional limit with null); remove it to keep the count honest.
          const id = ((await res.json()) as Json).apiKey.id as string;
          await getDb(env.DB).delete(apiKeys).where(eq(apiKeys.id, id));
          continue;
        }
        const body = await expectEnvelope(res, [400, 404]);
        const PERIOD = ["periodUsageLimit", "periodUsageDurationValue", "periodUsageDurationUnit"];
        const accepted = PERIOD.includes(field) ? PERIOD : [field];
        if (res.status === 400 && body.error.param) expect(accepted, `${field}: ${JSON.stringify(body)}`).toContain(String(body.error.param).split(".")[0]);
      }
    }
    expect(await countRows(apiKeys)).toBe(before);
  });

  it("a key whose IAM rules are invalid is not created at all", async () => {
    const keysBefore = await countRows(apiKeys);
    const rulesBefore = await countRows(iamRules);
    const bad = [
      [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }, { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/33"] } }],
      [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }, { ruleType: "nope", ruleValue: {} }],
      [{ ruleType: "allow_providers", ruleValue: { providers: ["../etc"] } }],
      [{ ruleType: "allow_pricing", ruleValue: { pricingType: "cheap" } }],
      [{ ruleType: "allow_models", ruleValue: { models: [] } }],
    ];
    for (const iamRules of bad) {
      await expectEnvelope(await master(org.masterKey, "POST", "/keys", { projectId: org.projectId, description: "x", iamRules }), 400);
    }
    // IP rules on a non-enterprise plan: 403, and neither key nor rules written.
    const freeKeys = await countRows(apiKeys);
    await expectEnvelope(
      await master(freeOrg.masterKey, "POST", "/keys", {
        projectId: freeOrg.projectId,
        description: "x",
        iamRules: [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8"] } }],
      }),
      403,
    );
    expect(await countRows(apiKeys)).toBe(freeKeys);
    expect(await countRows(apiKeys)).toBe(keysBefore);
    expect(await countRows(iamRules)).toBe(rulesBefore);
  });

  it("invalid CIDR strings in rules are a 400 naming the entry, no rule row", async () => {
    const invalid = [
      "10.0.0.0/33", "10.0.0.0/-1", "300.1.1.1/8", "::/129", "10.0.0.0/8/8", "10.0.0.0", "10.0.0.0/", "/8", "10.0.0.0/08x",
      "1.2.3.4/0x10", "fe80::%eth0/64", "10.0.0.0 /8", "10.0.0.0/8\u0000", "0x0a000000/8", "10.0/8x", "2001:db8::/32/1", ":::/64",
      "2001:db8:::/48", "localhost/32", "*", "10.*.*.*/8", "1.2.3.4/32; DROP TABLE iam_rules", "x".repeat(199),
    ];
    const before = await countRows(iamRules);
    for (const cidr of invalid) {
      for (const ruleType of ["allow_ip_cidrs", "deny_ip_cidrs"]) {
        const res = await master(org.masterKey, "POST", `/keys/${org.keyId}/iam`, { ruleType, ruleValue: { ipCidrs: ["192.168.0.0/16", cidr] } });
        const body = await expectEnvelope(res, 400);
        expect(body.error.param, cidr).toBe("ruleValue.ipCidrs.1");
      }
    }
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 60 }), async (s) => {
        fc.pre(!/^[0-9a-fA-F.:]+\/\d{1,3}$/.test(s.trim()));
        const res = await master(org.masterKey, "POST", `/members/${org.ownerMemberId}/iam`, { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: [s] } });
        await expectEnvelope(res, 400);
      }),
      { numRuns: 40 },
    );
    expect(await countRows(iamRules)).toBe(before);
  });

  it("random rule bodies on keys, members and teams", async () => {
    const team = (await (await master(org.masterKey, "POST", "/teams", { name: "rules team" })).json()) as Json;
    const targets = [`/keys/${org.keyId}/iam`, `/members/${org.ownerMemberId}/iam`, `/teams/${team.team.id}/iam`];
    const before = await countRows(iamRules);
    let created = 0;
    const ruleish = fc.record(
      { ruleType: fc.oneof(fc.constantFrom("allow_models", "deny_providers", "allow_ip_cidrs", "allow_pricing"), fc.jsonValue()), ruleValue: fc.jsonValue({ maxDepth: 2 }), status: fc.jsonValue({ maxDepth: 1 }) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), ruleish, async (target, rule) => {
        const res = await master(org.masterKey, "POST", target, rule);
        if (res.status === 201) {
          created++;
          return;
        }
        await expectEnvelope(res, 400);
      }),
      RUNS,
    );
    expect(await countRows(iamRules)).toBe(before + created);
  });

  it("bootstrap with hostile bodies creates no organization", async () => {
    const before = await countRows(organizations);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.record({ name: fc.jsonValue(), plan: fc.constantFrom("free", "pro", "gold", 1), owner: fc.record({ email: fc.string(), name: fc.jsonValue(), password: fc.string({ maxLength: 11 }) }) }),
        ),
        async (value) => {
          const res = await call("/v1/admin/organizations", { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN, body: JSON.stringify(value) });
          await expectEnvelope(res, 400);
        },
      ),
      { numRuns: 40 },
    );
    await expectEnvelope(await call("/v1/admin/organizations", { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN, body: deepObject(10_000) }), 400);
    expect(await countRows(organizations)).toBe(before);
  });

  it("deep nesting and huge strings in master bodies", async () => {
    const before = await countRows(projects);
    await expectEnvelope(await master(org.masterKey, "POST", "/projects", deepArray(10_000)), 400);
    await expectEnvelope(await master(org.masterKey, "POST", "/projects", `{"name":${deepObject(10_000)}}`), 400);
    await expectEnvelope(await master(org.masterKey, "POST", "/projects", { name: "p".repeat(1_000_000) }), 400);
    await expectEnvelope(await master(org.masterKey, "PATCH", "/organization", `{"compliance":{"deniedProviders":${deepArray(10_000)}}}`), 400);
    expect(await countRows(projects)).toBe(before);
  });
});

describe("hostile ids and paths", { timeout: 60_000 }, () => {
  const ids = [
    "..%2F..%2Fadmin", "%2F", "%2e%2e", "a%00b", "%E0%A4%A", "%ZZ", "x".repeat(10_000),
    encodeURIComponent("'; DROP TABLE projects; --"), "__proto__",
  ];
  const resources = ["projects", "keys", "teams", "custom-providers", "custom-models", "members", "provider-keys"];

  it("master resources: 4xx envelope for every hostile id and method", async () => {
    for (const r of resources) {
      for (const id of ids) {
        for (const method of ["GET", "PATCH", "DELETE"]) {
          const res = await master(org.masterKey, method, `/${r}/${id}`, method === "PATCH" ? { name: "x", description: "x" } : undefined);
          await expectEnvelope(res, [400, 404, 405]);
        }
      }
    }
    for (const id of ids.slice(0, 6)) {
      await expectEnvelope(await master(org.masterKey, "GET", `/keys/${id}/iam`), [400, 404]);
      await expectEnvelope(await master(org.masterKey, "DELETE", `/keys/${org.keyId}/iam/${id}`), [400, 404]);
    }
  });

  it("unknown and traversal paths anywhere are a 404 envelope", async () => {
    for (const path of ["/v1/../v1/master/projects", "/v1/chat/completions/../../admin", "/%2e%2e/%2e%2e/etc/passwd", "/v1/%00", "/v1/models/" + "m".repeat(10_000), "/api/%2F%2F", "/v1/master%2Fprojects"]) {
      const res = await call(path, { key: org.masterKey });
      if (res.status === 200) continue; // `..` segments are resolved by the URL parser to a real route
      await expectEnvelope(res, [400, 401, 404, 405]);
    }
  });

  it("models and health reject hostile query strings with 400", async () => {
    for (const q of ["?skip=nope", "?skip=" + "a,".repeat(5000), "?skip=%00"]) await expectEnvelope(await call(`/${q}`), 400);
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom("mapped", "include_restricted", "provider", "modality", "x"), fc.string({ maxLength: 30 })), async (params) => {
        const res = await call(`/v1/models?${new URLSearchParams(params).toString()}`);
        if (res.status === 200) {
          expect(((await res.json()) as Json).object).toBe("list");
          return;
        }
        await expectEnvelope(res, 400);
      }),
      { numRuns: 30 },
    );
  });
});

describe("MCP: hostile JSON-RPC", { timeout: 60_000 }, () => {
  const rpcRaw = (body: string, key = org.key) =>
    call("/mcp", { method: "POST", key, body, headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } });

  async function expectRpcError(res: Response): Promise<void> {
    const text = await res.clone().text();
    expect(res.status, text.slice(0, 300)).toBeLessThan(500);
    expectNoStack(text);
    // Replies come as JSON or as a short SSE stream of `event: message` frames.
    const body = await readRpc<Json | Json[]>(res);
    const messages = Array.isArray(body) ? body : [body];
    for (const m of messages) {
      expect(m.jsonrpc).toBe("2.0");
      if (m.error) {
        expect(typeof m.error.code).toBe("number");
        expect(typeof m.error.message).toBe("string");
      } else {
        expect(m.result).toBeDefined();
      }
    }
  }

  it("random JSON values and random JSON-RPC-shaped messages get a JSON-RPC error, never a 500", async () => {
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.jsonValue()),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue()),
        method: fc.oneof(fc.constantFrom("initialize", "tools/call", "tools/list", "resources/read", "prompts/get", "ping", "../x"), fc.string({ maxLength: 20 }), fc.jsonValue()),
        params: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: ["jsonrpc", "method"] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue({ maxDepth: 3 }), message), async (value) => {
        const res = await rpcRaw(JSON.stringify(value));
        if (res.status === 202) return; // a notification (no id) is acknowledged without a body
        await expectRpcError(res);
      }),
      RUNS,
    );
  });

  it("an x-source named after an Object.prototype member is a custom app name, logged as sent", async () => {
    const names = ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"];
    const ids: string[] = [];
    for (const name of names) {
      const res = await chat(org.key, valid(), { "x-source": name });
      expect(res.status, name).toBe(200);
      ids.push(res.headers.get("x-request-id")!);
    }
    const rows = await waitForLogs(ids);
    expect(ids.map((id) => rows.find((r) => r.requestId === id)?.sourceApp)).toEqual(names);
  });

  it("methods named after Object.prototype members are unknown methods, not a 500", async () => {
    // Found by the property above (seed -1021276400): `valueOf` reached an inherited function.
    for (const method of Object.getOwnPropertyNames(Object.prototype)) {
      for (const id of [1, ""]) await expectRpcError(await rpcRaw(JSON.stringify({ jsonrpc: "2.0", id, method })));
      const batch = await rpcRaw(JSON.stringify([{ jsonrpc: "2.0", id: 1, method }, { jsonrpc: "2.0", id: 2, method: "ping" }]));
      await expectRpcError(batch);
    }
  });

  it("tool calls with wrong argument types are JSON-RPC or tool errors", async () => {
    for (const [name, args] of [
      ["chat", { model: 123, messages: "x" }],
      ["chat", { model: "../..", messages: [{ role: "user", content: "x" }] }],
      ["chat", { model: MODEL, messages: [{ role: "user", content: deepArray(2000) }] }],
      ["list-models", { limit: -1, provider: {} }],
      ["get-usage", { from: "yesterday", to: 42 }],
      ["nope", {}],
      ["generate-image", { prompt: null }],
    ] as const) {
      const res = await rpcRaw(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } }));
      await expectRpcError(res);
    }
  });

  it("parse errors, deep nesting and garbage", async () => {
    for (const body of ["{", "", "null", deepArray(10_000), deepObject(10_000), "[]", "[1,2,3]", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + deepObject(10_000) + "}"]) {
      const res = await rpcRaw(body);
      if (res.status === 202) continue;
      await expectRpcError(res);
    }
  });
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

/**
 * Bad input on the master and bootstrap APIs, resource ids and paths, models and health: random,
 * hostile and malformed bodies, ids and query strings get a 4xx error envelope, never a 500 or a
 * stack trace, and leave no partial write (row counts checked).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { count, eq } from "drizzle-orm";
import { seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, customModels, customProviders, iamRules, members, organizations, projects, providerKeys, teams } from "../../src/db/schema";
import { callDirect as call, expectEnvelope, masterDirect as master, type Json } from "./helpers";
import { deepArray, deepObject, RUNS } from "./hostile-input";

let org: SeededOrg;
let freeOrg: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ plan: "enterprise" });
  freeOrg = await seedOrg({ plan: "free" });
});

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


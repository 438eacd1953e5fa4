/**
 * `x-gateway-overhead-ms` counts the time spent in the gateway, upstream time excluded. A JSON
 * answer leaves once its record is durable in the key's object (src/routes/chat/serve.ts), so that
 * wait is the gateway's time and belongs in the header: with only the key's object far away
 * (DO_LATENCY_MS; the organization's credit and rate objects near), a warm key's JSON answer,
 * admitted from its lease, reports at least the object's latency.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { seedOrg } from "../helpers/fixtures";
import { orgCreditsStub } from "../../src/durable-objects/org-credits";
import { rateCounterStub } from "../../src/durable-objects/rate-limiter";
import { chatVia, latencies, say } from "./helpers";

const NO_LATENCY = Object.create(env, { DO_LATENCY_MS: { value: "0", enumerable: true } }) as Env;

describe("x-gateway-overhead-ms on a JSON answer", () => {
  it("includes the wait for the record's commit to the key's object", async () => {
    const { object } = latencies();
    const org = await seedOrg();
    for (const stub of [orgCreditsStub(env, org.orgId), rateCounterStub(env, `rate:org:${org.orgId}`), rateCounterStub(env, `rate:key:${org.keyId}`)]) {
      await runInDurableObject(stub as DurableObjectStub, (instance: object) => {
        Object.defineProperty(instance, "env", { value: NO_LATENCY, configurable: true, writable: true });
      });
    }
    // The first request takes the key's lease (an awaited call); the next one, sent while that
    // lease lives, admits from it.
    const first = chatVia(org.key, say("warm the lease"), { env });
    const firstRes = await first.res;
    expect(firstRes.status).toBe(200);
    await firstRes.text();
    const warm = chatVia(org.key, say("from the lease"), { env });
    const res = await warm.res;
    expect(res.status).toBe(200);
    await res.text();
    await Promise.all([first.done, warm.done]);
    expect(Number(res.headers.get("x-gateway-overhead-ms"))).toBeGreaterThanOrEqual(object);
  });
});

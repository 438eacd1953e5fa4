/**
 * A member's queued settlements reach the member's budget object even when the flush call fails:
 * the isolate resends them under the flush's id, and the object applies an id once, so a call that
 * landed but whose answer was lost is not counted twice.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { memberBudgetName, queueMemberSettlement, settleMemberNow } from "../../src/members/budget";
import type { Env } from "../../src/env";

const COST = 1_000_000n;

type Failure = "before" | "after";

/** An env whose budget objects' `flush` fails once per entry of `failures`: before reaching the object, or after it answered. */
function failingEnv(failures: Failure[]): { env: Env; calls: () => number } {
  let calls = 0;
  const ns = env.KEY_STATE;
  const wrapped = {
    idFromName: (name: string) => ns.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = ns.get(id);
      return new Proxy(stub, {
        get(target, prop, receiver) {
          if (prop !== "flush") return Reflect.get(target, prop, receiver) as unknown;
          return async (...args: Parameters<typeof stub.flush>) => {
            calls++;
            const failure = failures.shift();
            if (failure === "before") throw new Error("network error (call never arrived)");
            const answer = await stub.flush(...args);
            if (failure === "after") throw new Error("network error (answer lost)");
            return answer;
          };
        },
      });
    },
  };
  return { env: { ...env, KEY_STATE: wrapped as unknown as Env["KEY_STATE"] }, calls: () => calls };
}

async function memberWithLimit() {
  const org = await seedOrg();
  const key = await addKey(org, { description: "k" });
  const set = await call(`/v1/master/members/${org.ownerMemberId}/limits`, { method: "PATCH", key: org.masterKey, ...json({ usageLimit: "100" }) });
  expect(set.status, await set.clone().text()).toBe(200);
  const ctx = await resolveGatewayKey(env, key.token);
  const budget = keyStateStub(env, memberBudgetName(org.ownerMemberId));
  return { ctx, usage: async () => (await budget.getSpend()).usage };
}

describe("member settlement flushes are resent, applied once", () => {
  it("a queued settlement whose flush call failed is resent and arrives", async () => {
    const { ctx, usage } = await memberWithLimit();
    const before = await usage();
    const f = failingEnv(["before", "before"]);
    await queueMemberSettlement(f.env, ctx, `own-${crypto.randomUUID()}`, COST);
    expect(f.calls()).toBe(3);
    expect((await usage()) - before).toBe(COST);
  });

  it("a flush that landed but whose answer was lost is resent and not counted twice", async () => {
    const { ctx, usage } = await memberWithLimit();
    const before = await usage();
    const f = failingEnv(["after"]);
    await queueMemberSettlement(f.env, ctx, `own-${crypto.randomUUID()}`, COST);
    expect(f.calls()).toBe(2);
    expect((await usage()) - before).toBe(COST);
  });

  it("an immediate settlement (images, videos, moderations) is resent once, then parked and resent with the next flush, counted once", async () => {
    const { ctx, usage } = await memberWithLimit();
    const before = await usage();
    // Fails before arriving, then lands with its answer lost: parked (the caller sees the error).
    const f = failingEnv(["before", "after"]);
    await expect(settleMemberNow(f.env, ctx, `own-${crypto.randomUUID()}`, COST)).rejects.toThrow(/answer lost/);
    expect(f.calls()).toBe(2);
    expect((await usage()) - before).toBe(COST);
    // The member's next settlement from this isolate resends the parked one: applied already, not counted again.
    const next = failingEnv([]);
    await queueMemberSettlement(next.env, ctx, `own-${crypto.randomUUID()}`, COST);
    expect(next.calls()).toBe(2);
    expect((await usage()) - before).toBe(2n * COST);
  });
});

/**
 * No wait on the request path without a bound. A request that starts a budget round trip (a
 * lease renewal, the single flight other requests of the same budget wait for) and is then
 * cancelled by its client leaves that promise unsettled forever: the requests that waited on it
 * had nothing of their own left to wait for, and workerd cancelled them ("the Worker's code had
 * hung"), for that budget, until the isolate restarted. Here: a member limit changed under a
 * trickle of the member's requests, the call of the request that asks the member's budget next
 * never answers (as when its client went away), and then the member's requests and brand-new
 * organizations' requests must all be answered.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { describe, expect, it } from "vitest";
import { addKey, seedOrg } from "../helpers/fixtures";
import { memberBudgetName } from "../../src/members/budget";
import { viaLease } from "../../src/auth/leases";
import { ApiError } from "../../src/errors/api-error";
import { master, sleep } from "./helpers";

const chatBody = (content: string) => JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content }] });

/** Status of a request, or "timeout" when it is not answered within `ms`. */
async function answered(p: Promise<Response>, ms: number): Promise<number | "timeout" | "error"> {
  const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms));
  try {
    const out = await Promise.race([p.then(async (res) => (await res.text(), res.status)), timeout]);
    return out;
  } catch {
    return "error";
  }
}

describe("no request waits without bound", () => {
  it("a renewal whose request never settles it delays the next request of the same budget by at most a bound", async () => {
    const name = `test:abandoned:${crypto.randomUUID()}`;
    // The first request's round trip never answers (its request was cancelled): it is refused
    // once its own bound passes ...
    const stuck = viaLease<{ ok: boolean }>(name, 1n, { boundMs: 400 }, () => new Promise(() => undefined), () => null);
    const refusal = stuck.then(
      () => null,
      (err: unknown) => err,
    );
    // ... and a second request of the same budget does not wait on it for ever: it asks itself.
    const started = Date.now();
    const second = await viaLease<{ ok: boolean }>(name, 1n, { boundMs: 400 }, async () => ({ ok: true }), () => null);
    expect(second).toEqual({ gate: { ok: true } });
    expect(Date.now() - started).toBeLessThan(5_000);
    const err = await refusal;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).code).toBe("budget_busy");
  });

  it("member limit changed under load, the request that asks the member's budget never settles: the member's and new organizations' requests are all answered", async () => {
    const org = await seedOrg();
    const second = await addKey(org, { description: "second" });
    const set = await master(org.masterKey, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "1" });
    expect(set.status, await set.clone().text()).toBe(200);
    // The isolate as a cancelled request leaves it: the member budget's next admission call (made
    // by a request whose client went away) never answers; every later call answers normally.
    const target = env.KEY_STATE.idFromName(memberBudgetName(org.ownerMemberId));
    let stalls = 0;
    type Stub = Record<string | symbol, (...a: unknown[]) => unknown>;
    const stalling = (stub: object): object =>
      new Proxy(stub, {
        get(s, q) {
          if (q === "admit" && stalls > 0) {
            stalls--;
            return () => new Promise(() => undefined);
          }
          return (...a: unknown[]) => (s as Stub)[q]!(...a);
        },
      });
    const KEY_STATE = new Proxy(env.KEY_STATE, {
      get(t, p) {
        if (p === "get") return (id: DurableObjectId) => (id.equals(target) ? stalling(t.get(id)) : t.get(id));
        const v: unknown = Reflect.get(t, p);
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const patched = Object.create(env, { KEY_STATE: { value: KEY_STATE, enumerable: true } }) as Env;
    const send = (key: string, content: string) =>
      Promise.resolve(
        app.fetch(
          new Request("http://gw.test/v1/chat/completions", {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
            body: chatBody(content),
          }),
          patched,
          createExecutionContext(),
        ),
      );

    // A trickle of the member's requests while the limit is changed (lowered, then raised).
    const trickle: Array<Promise<number | "timeout" | "error">> = [];
    for (let i = 0; i < 8; i++) {
      trickle.push(answered(send(i % 2 ? org.key : second.token, `trickle ${i}`), 30_000));
      await sleep(20);
    }
    const lowered = await master(org.masterKey, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "0.5" });
    expect(lowered.status).toBe(200);
    // The first request after the change asks the member's budget (and never hears back); the
    // others of the member wait for that single flight.
    stalls = 1;
    const first = answered(send(org.key, "first after the change"), 30_000);
    await sleep(50);
    const after = await Promise.all(Array.from({ length: 6 }, (_, i) => answered(send(i % 2 ? org.key : second.token, `after ${i}`), 20_000)));
    expect(after, "the member's requests after the change").toEqual(after.map(() => 200));
    // The request whose call never answered is refused with a retry, not hung.
    expect(await first).toBe(429);
    expect((await Promise.all(trickle)).every((s) => s === 200)).toBe(true);
    const raised = await master(org.masterKey, "PATCH", `/members/${org.ownerMemberId}/limits`, { usageLimit: "2" });
    expect(raised.status).toBe(200);

    // Brand-new organizations with plain owner keys are served, every one of them.
    const fresh = await Promise.all(Array.from({ length: 6 }, () => seedOrg()));
    const statuses = await Promise.all(fresh.map((o, i) => answered(send(o.key, `new org ${i}`), 20_000)));
    expect(statuses).toEqual(fresh.map(() => 200));
    expect(await answered(send(org.key, "member again"), 20_000)).toBe(200);
  }, 120_000);
});

/**
 * Counting calls to KeyState objects made by ONE request: the app runs with an env whose
 * `KEY_STATE` binding counts every stub it hands out (each `keyStateStub` call gets one stub per
 * call it makes). Background work of earlier requests (settlements, lease renewals) used the
 * suite's own env and is not counted.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import type { Env } from "../../src/env";

export interface Counted {
  res: Response;
  /** KeyState stubs handed out while the request (and its waitUntil work) ran. */
  keyStateCalls: number;
}

/** Calls the app once with a counting KEY_STATE binding and waits for its waitUntil work. */
export async function withKeyStateCount(path: string, init: RequestInit & { key?: string } = {}): Promise<Counted> {
  let calls = 0;
  const ns = env.KEY_STATE;
  const counting = new Proxy(ns, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (prop === "get" || prop === "getByName") calls++;
        return fn.apply(target, args);
      };
    },
  });
  const patched = Object.create(env, { KEY_STATE: { value: counting, enumerable: true } }) as Env;
  const headers = new Headers(init.headers);
  if (init.key) headers.set("authorization", `Bearer ${init.key}`);
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://gw.test${path}`, { ...init, headers }), patched, ctx);
  const body = await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return { res: new Response(body, res), keyStateCalls: calls };
}

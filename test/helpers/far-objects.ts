/**
 * The suite's env with the budget objects far away (issue 23): every call to a KeyState or
 * OrgCredits stub waits first, as for an object on another continent (the test form of the
 * bench's DO_LATENCY_MS, which the objects read from their own env).
 */
import { env } from "cloudflare:workers";
import type { Env } from "../../src/env";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A namespace whose every stub call waits `ms` before it is sent. */
export function slowNamespace<T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>, ms: number): DurableObjectNamespace<T> {
  const stubOf = (stub: DurableObjectStub<T>): DurableObjectStub<T> =>
    new Proxy(stub, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        const methods = target as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        return async (...args: unknown[]) => {
          await sleep(ms);
          return methods[prop]!(...args);
        };
      },
    });
  return new Proxy(ns, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop === "get" || prop === "getByName") return (...args: unknown[]) => stubOf(fn.apply(target, args) as DurableObjectStub<T>);
      return (...args: unknown[]) => fn.apply(target, args);
    },
  });
}

/** The suite's env with both budget objects `ms` away. */
export const farObjects = (ms: number, extra: PropertyDescriptorMap = {}): Env =>
  Object.create(env, {
    KEY_STATE: { value: slowNamespace(env.KEY_STATE, ms) },
    ORG_CREDITS: { value: slowNamespace(env.ORG_CREDITS, ms) },
    ...extra,
  }) as Env;

/**
 * The suite's env with the budget objects far away: every call to a KeyState or
 * OrgCredits stub waits first, as for an object on another continent (the test form of the
 * bench's DO_LATENCY_MS, which the objects read from their own env).
 */
import { env } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { namespaceAround } from "../../src/lib/debug-world";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A namespace whose every stub call waits `ms` before it is sent. */
export const slowNamespace = <T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>, ms: number): DurableObjectNamespace<T> =>
  namespaceAround(ns, async (call) => {
    await sleep(ms);
    return call();
  });

/** The suite's env with both budget objects `ms` away. */
export const farObjects = (ms: number, extra: PropertyDescriptorMap = {}): Env =>
  Object.create(env, {
    KEY_STATE: { value: slowNamespace(env.KEY_STATE, ms) },
    ORG_CREDITS: { value: slowNamespace(env.ORG_CREDITS, ms) },
    ...extra,
  }) as Env;

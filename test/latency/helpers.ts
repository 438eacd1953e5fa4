/**
 * The latency project (vitest.config.ts, `LATENCY_BINDINGS`): every budget-object call waits
 * DO_LATENCY_MS in the object, and a request through `far` (src/lib/debug-world.ts's `worldEnv`,
 * what the Worker's fetch handler uses) pays D1_PRIMARY_LATENCY_MS per statement on the D1 primary,
 * D1_REPLICA_LATENCY_MS on a read replica and KV_LATENCY_MS per KV call.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { worldEnv } from "../../src/lib/debug-world";
import { parseUsd } from "../../src/billing/money";
import { recorded as recordedRequests } from "../helpers/recorded";

export const MODEL = "gpt-4o-mini";

const num = (name: string): number => Number((env as unknown as Record<string, unknown>)[name]);

/** The injected latencies (ms), asserted present: a test here is meaningless without them. */
export function latencies(): { object: number; primary: number; replica: number } {
  const l = { object: num("DO_LATENCY_MS"), primary: num("D1_PRIMARY_LATENCY_MS"), replica: num("D1_REPLICA_LATENCY_MS") };
  expect(l.object).toBeGreaterThanOrEqual(50);
  expect(l.primary).toBeGreaterThanOrEqual(20);
  expect(l.replica).toBeGreaterThan(0);
  return l;
}

/** The env of a request (and of admin changes) as the fetch handler builds it: D1 and KV slowed down. */
export const far: Env = worldEnv(env);

export interface Sent {
  res: Promise<Response>;
  /** Its waitUntil work (settlement, logs) done. */
  done: Promise<void>;
}

/** A request through the app under `e` (default `far`) with its own execution context. */
export function send(path: string, key: string, body: Record<string, unknown>, opts: { signal?: AbortSignal; env?: Env } = {}): Sent {
  const ctx = createExecutionContext();
  const res = Promise.resolve(
    app.fetch(
      new Request(`http://gw.test${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true", "x-no-fallback": "true" },
        body: JSON.stringify(body),
        ...(opts.signal ? { signal: opts.signal } : {}),
      }),
      opts.env ?? far,
      ctx,
    ),
  );
  return { res, done: res.then(() => waitOnExecutionContext(ctx)).catch(() => undefined) };
}

/** A chat completion (`max_tokens` 5 unless given) through `send`. */
export const chatVia = (key: string, body: Record<string, unknown>, opts: { signal?: AbortSignal; env?: Env } = {}): Sent =>
  send("/v1/chat/completions", key, { model: MODEL, max_tokens: 5, ...body }, opts);

export const say = (text: string) => ({ messages: [{ role: "user", content: text }] });

/** The cost a chat answer reports (JSON, or the usage chunk of a stream). */
export async function costOf(res: Response): Promise<bigint> {
  const text = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: {") && l.includes('"usage":{')).map((l) => l.slice(6)).pop()!
    : text;
  const body = JSON.parse(json) as { usage: { cost: number } };
  return parseUsd(body.usage.cost.toFixed(12));
}

export const usd = (pico: bigint): string => (Number(pico) / 1e12).toFixed(12);

/** How many upstream requests carried `[[tag:<tag>]]` (test/fake-upstream/README.md, Recording). */
export async function recorded(tag: string): Promise<number> {
  return (await recordedRequests(tag)).length;
}

/**
 * Shared helpers of the resilience suites (faults, bad input, load, security).
 * Everything talks to the real Worker (same isolate) with real D1 and Durable Objects.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { eq, inArray } from "drizzle-orm";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { getDb } from "../../src/db/client";
import { requestLogs } from "../../src/db/schema";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { call } from "../helpers/fixtures";

export type Json = Record<string, any>;
export type LogRow = typeof requestLogs.$inferSelect;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Lets one turn of workerd's event loop pass, as a request arriving from the network does. Load
 * tests run their clients inside the Worker's isolate, so their calls to the app and its Durable
 * Objects never leave the process; workerd fires due timers (also those inside a Durable Object)
 * only when its loop runs out of ready work. Clients calling back to back keep it busy, and every
 * timer in the process (a key's sync waiting out its leases, the log batches, the test's own
 * waits) would fire only once the load stops. A real client's next request comes through the
 * socket, which the loop polls together with its timers; a client loop awaits this before each one.
 */
export const nextArrival = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** A master API call (`Authorization: Bearer <master key>`), JSON body. */
export function master(masterKey: string, method: string, path: string, body?: unknown): Promise<Response> {
  return call(`/v1/master${path}`, {
    method,
    key: masterKey,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** Chat completion through the Worker's own fetch. */
export function chat(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return call("/v1/chat/completions", {
    method: "POST",
    key,
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Calls the app with extra/overridden env vars (e.g. a short UPSTREAM_TIMEOUT_MS or
 * ENVIRONMENT=production), waiting for its waitUntil work only when asked.
 */
export async function callWithEnv(
  overrides: Record<string, unknown>,
  path: string,
  init: RequestInit & { key?: string } = {},
): Promise<{ res: Response; settled: () => Promise<void> }> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("authorization", `Bearer ${init.key}`);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  const patched = Object.create(env, Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, { value: v, enumerable: true }]))) as Env;
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://gw.test${path}`, { ...init, headers }), patched, ctx);
  return { res, settled: () => waitOnExecutionContext(ctx) };
}

/**
 * The app's fetch called directly in the test's context (no per-request IoContext). Much cheaper
 * than `exports.default.fetch`, whose per-call cost grows with the number of calls made in a test
 * file (@cloudflare/vitest-plugin); used by the high-volume bad-input properties, where request
 * isolation does not matter.
 */
export function callDirect(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("authorization", `Bearer ${init.key}`);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  return Promise.resolve(app.fetch(new Request(`http://gw.test${path}`, { ...init, headers }), env, createExecutionContext()));
}

export function masterDirect(masterKey: string, method: string, path: string, body?: unknown): Promise<Response> {
  return callDirect(`/v1/master${path}`, {
    method,
    key: masterKey,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

export function chatDirect(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return callDirect("/v1/chat/completions", {
    method: "POST",
    key,
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Asserts the spec's error envelope and the absence of anything that looks like a stack trace. */
export async function expectEnvelope(res: Response, status?: number | number[]): Promise<Json> {
  const text = await res.text();
  if (status !== undefined) {
    const allowed = Array.isArray(status) ? status : [status];
    expect(allowed, `status ${res.status}: ${text.slice(0, 300)}`).toContain(res.status);
  }
  expect(res.status, text.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(res.status, text.slice(0, 300)).toBeLessThan(500);
  expectNoStack(text);
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
  expect(body.error, text.slice(0, 300)).toBeTypeOf("object");
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.type).toBe("string");
  expect(typeof body.error.code).toBe("string");
  expect(body.error.param === null || typeof body.error.param === "string").toBe(true);
  return body;
}

/** No stack frames, file paths or internal error class names in a body. */
export function expectNoStack(text: string): void {
  expect(text).not.toMatch(/\n\s+at\s/);
  expect(text).not.toMatch(/\bat [\w$.<>]+ \(/);
  expect(text).not.toMatch(/\.(ts|js|mjs):\d+/);
  expect(text).not.toMatch(/\b(TypeError|ReferenceError|SyntaxError|RangeError|ZodError|D1_ERROR|SQLITE_)/);
}

export { waitForLog } from "../chat/helpers";

/** Polls D1 until every one of the request ids has its log row. */
export async function waitForLogs(requestIds: string[], timeoutMs = 10_000): Promise<LogRow[]> {
  const db = getDb(env.DB);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows: LogRow[] = [];
    for (let i = 0; i < requestIds.length; i += 80) {
      rows.push(...(await db.select().from(requestLogs).where(inArray(requestLogs.requestId, requestIds.slice(i, i + 80)))));
    }
    if (rows.length >= requestIds.length || Date.now() > deadline) return rows;
    await sleep(50);
  }
}

/** Every log row of a key. */
export const keyLogs = (keyId: string): Promise<LogRow[]> =>
  getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.apiKeyId, keyId));

/**
 * Waits until the key's KeyState DO has no open reservation, then returns its spend and the sum
 * of the key's logged costs (both bigint pico-dollars).
 */
export async function settledSpend(keyId: string, timeoutMs = 5000): Promise<{ usage: bigint; logged: bigint; rows: LogRow[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spend = await keyStateStub(env, keyId).getSpend();
    const rows = await keyLogs(keyId);
    const logged = rows.reduce((s, r) => s + BigInt(r.costPico), 0n);
    if ((spend.reserved === 0n && spend.usage === logged) || Date.now() > deadline) return { usage: spend.usage, logged, rows };
    await sleep(25);
  }
}

/**
 * An organization's credit balance once every request of these keys is settled and logged (the
 * consumer writes a record's row and its debit in one D1 batch, so every row there means every
 * debit applied).
 */
export async function settledBalance(orgId: string, keyIds: readonly string[], timeoutMs = 15_000): Promise<bigint> {
  for (const id of keyIds) await settledSpend(id, timeoutMs);
  const r = await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(orgId).first<{ c: string }>();
  return BigInt(r!.c);
}

/** Parses an SSE body into its `data:` payloads (JSON objects or "[DONE]"). */
export function parseSse(raw: string): Array<Json | "[DONE]"> {
  const events: Array<Json | "[DONE]"> = [];
  for (const block of raw.split("\n\n")) {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6))
      .join("\n");
    if (!data) continue;
    events.push(data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as Json));
  }
  return events;
}

/**
 * Forgets live provider metrics so routing starts from the catalog order: the chat tests' reset,
 * which first lets the previous test's metric writes land (a write landing after the objects were
 * emptied would come back with the next snapshot, and move a later test's hedge delay).
 */
export { resetMetrics } from "../chat/helpers";

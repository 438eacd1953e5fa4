/**
 * Dropped streams are billed and logged once, with the objects and the D1 primary far away (test/latency/helpers.ts):
 * streams dropped while admission is still being asked (the early upstream call under way), right
 * after the headers, mid-stream and just before the end, in the three chat dialects and the four
 * ways a client goes away (test/resilience/dropped-streams.test.ts): every request is logged once
 * and billed once, spend and logs agree, nothing stays reserved.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { addKey, seedOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { keyLogs, settledSpend, sleep } from "../resilience/helpers";
import { far, latencies, send } from "./helpers";

type Point = "admission" | "headers" | "mid" | "before-done";
type How = "both" | "cancel" | "signal" | "abandon";

/** A short write-stall bound, so abandoned streams end quickly here (the default is 10 s). */
const stallEnv = Object.create(far, { STREAM_WRITE_STALL_MS: { value: "300", enumerable: true } }) as Env;
const abandoned: ReadableStreamDefaultReader<Uint8Array>[] = [];
const decoder = new TextDecoder();

/**
 * One stream, dropped at `point` the way `how` says; resolves once the request's waitUntil work
 * (the stream's pump, its settlement) is done, except for an abandoned body.
 */
async function dropOne(key: string, i: number, point: Point, how: How, upstream: string, objectMs: number): Promise<void> {
  const content = `drop ${i} ${upstream}`;
  const dialect = i % 3;
  const [path, body] =
    dialect === 0
      ? ["/v1/chat/completions", { model: "gpt-4o-mini", stream: true, max_tokens: 4000, messages: [{ role: "user", content }] }]
      : dialect === 1
        ? ["/v1/messages", { model: "gpt-4o-mini", stream: true, max_tokens: 4000, messages: [{ role: "user", content }] }]
        : ["/v1/responses", { model: "gpt-4o-mini", stream: true, max_output_tokens: 4000, input: content }];
  const abort = new AbortController();
  const { res, done } = send(path, key, body, { signal: abort.signal, env: stallEnv });
  if (point === "admission") {
    // Gone while admission is still being asked: the early call is under way, nothing answered yet.
    await sleep(objectMs / 3);
    abort.abort();
    const r = await res;
    // Nobody reads it, but it is the pipeline's own answer in every dialect: 499 (gone before the
    // first event) or the stream it had started; never an error thrown while translating a 499.
    expect([200, 499], path).toContain(r.status);
    await r.body?.cancel().catch(() => undefined);
    await done;
    return;
  }
  const r = await res;
  expect(r.status, path).toBe(200);
  const reader = r.body!.getReader();
  if (point === "mid") {
    for (let n = 0; n < 1 + (i % 5); n++) if ((await reader.read()).done) break;
  } else if (point === "before-done") {
    let seen = "";
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      seen += decoder.decode(value, { stream: true });
      if (/"usage"|message_delta|response\.completed/.test(seen)) break;
    }
  }
  if (how === "abandon") {
    abandoned.push(reader);
    return;
  }
  if (how !== "cancel") abort.abort();
  if (how !== "signal") await reader.cancel().catch(() => undefined);
  else reader.releaseLock();
  await done;
}

describe("dropped streams under object latency", () => {
  it("36 streams dropped before admission answered, after the headers, mid-stream and before the end: each logged once, billed once", async () => {
    const lat = latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "50" });
    const points: Point[] = ["admission", "headers", "mid", "before-done"];
    const hows: How[] = ["both", "cancel", "signal", "abandon"];
    // The first token after admission answered (early calls in flight), then a dripping answer; a
    // third of the upstreams stall after their first frame.
    const upstreams = [`[[fake:words=80,drip=5,ttft=${lat.object + 60}]]`, `[[fake:words=80,drip=5,ttft=${lat.object + 60}]]`, `[[fake:hang_midstream,ttft=${lat.object + 60}]]`];
    const n = 36;
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const upstream = upstreams[i % upstreams.length]!;
        // A stalled upstream sends one frame: its client leaves before admission answered or after the headers.
        const point = upstream.includes("hang") ? (i % 2 ? "headers" : "admission") : points[i % points.length]!;
        // An abandoned body of a stalled upstream is noticed at the next keep-alive (several seconds
        // later in the translated dialects, test/resilience/dropped-streams.test.ts covers it).
        const how = hows[Math.floor(i / 4) % hows.length]!;
        return dropOne(token, i, point, upstream.includes("hang") && how === "abandon" ? "both" : how, upstream, lat.object);
      }),
    );
    let rows = await keyLogs(row.id);
    for (let i = 0; i < 200 && rows.length < n; i++) {
      await sleep(50);
      rows = await keyLogs(row.id);
    }
    // No second row for any of them.
    await sleep(300);
    rows = await keyLogs(row.id);
    // Once each: n rows, n distinct requests.
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((r) => r.requestId)).size).toBe(n);
    // Aborted, or served whole (a client that read up to the usage frame may leave after the end).
    expect(rows.filter((r) => !r.clientAborted && r.statusCode !== 200).map((r) => r.requestId)).toEqual([]);
    // Billed: every stream that reached the client is charged (what was generated, else the
    // bound); one gone before its first byte costs what its upstream call may have cost (its bound
    // once the call started, else nothing). The key's spend is exactly the logged costs.
    expect(rows.filter((r) => r.statusCode === 200 && r.costPico <= 0).map((r) => r.requestId)).toEqual([]);
    expect(rows.filter((r) => r.statusCode === 200).length).toBeGreaterThanOrEqual(n / 2);
    const { usage, logged } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    expect(usage).toBeGreaterThan(0n);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
    expect(abandoned.length).toBeGreaterThan(0);
  });
});

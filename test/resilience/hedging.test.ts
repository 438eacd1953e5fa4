/**
 * Hedged requests (project setting `hedging`, src/routes/chat/hedge.ts): a first provider that is
 * slow but alive (`[[fake@<provider>:delay=MS]]`: nothing, not even headers, for MS) gets company
 * from the next candidate after the hedge delay (HEDGE_AFTER_MS here, 300 ms, before there is
 * evidence); the first to answer wins, the other is cancelled and shown with its price.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { callWithEnv, master, parseSse, resetMetrics, settledSpend, waitForLog, type Json } from "./helpers";

const MODEL = "llama-3.3-70b-instruct";
const PRIMARY = "deepinfra";
const HEDGE_ENV = { HEDGE_AFTER_MS: "300" };

let hedged: SeededOrg;
let plain: SeededOrg;
beforeAll(async () => {
  hedged = await seedOrg();
  plain = await seedOrg();
  const res = await master(hedged.masterKey, "PATCH", `/projects/${hedged.projectId}`, { hedging: true });
  expect(res.status).toBe(200);
  expect(((await res.json()) as Json).project.hedging).toBe(true);
});
beforeEach(resetMetrics);

const body = (content: string, extra: Json = {}) => ({ model: MODEL, max_tokens: 20, messages: [{ role: "user", content: `${content} ${crypto.randomUUID()}` }], ...extra });

function post(key: string, payload: Json) {
  return callWithEnv(HEDGE_ENV, "/v1/chat/completions", { method: "POST", key, body: JSON.stringify(payload) });
}

describe("hedged requests", () => {
  it.each([
    ["non-streamed", false],
    ["streamed", true],
  ])("%s: a slow first provider is overtaken by the hedge; the first is cancelled at no cost", async (_name, streamed) => {
    const started = Date.now();
    const content = `slow [[fake@${PRIMARY}:delay=4000]]`;
    const { res, settled } = await post(hedged.key, streamed ? body(content, { stream: true, stream_options: { include_usage: true } }) : body(content));
    const text = await res.text();
    expect(res.status, text).toBe(200);
    // The hedge starts at 300 ms and answers at once; the slow provider would take 4 s.
    expect(Date.now() - started).toBeLessThan(3_000);
    const json = (streamed ? parseSse(text).filter((e): e is Json => e !== "[DONE]").at(-1) : JSON.parse(text)) as Json;
    expect(json.metadata.used_provider).not.toBe(PRIMARY);
    const routing = json.metadata.routing as Json[];
    expect(routing).toHaveLength(2);
    expect(routing[0]).toMatchObject({ provider: PRIMARY, succeeded: false, status_code: 499, error_type: "hedge_cancelled", hedge_cost: 0 });
    expect(routing[0]!.latency_ms).toBeGreaterThanOrEqual(250);
    expect(routing[1]).toMatchObject({ succeeded: true, status_code: 200 });
    await settled();
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.routing[0]).toMatchObject({ provider: PRIMARY, error_type: "hedge_cancelled", hedge_cost: 0 });
    expect(log.costPico).toBe(Math.round(json.usage.cost * 1e12));
    const { usage, logged } = await settledSpend(hedged.keyId);
    expect(usage).toBe(logged);
  });

  it("a first provider that answers before the hedge delay runs alone", async () => {
    const { res } = await post(hedged.key, body(`quick [[fake@${PRIMARY}:delay=50]]`));
    const json = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(json.metadata.used_provider).toBe(PRIMARY);
    expect(json.metadata.routing).toHaveLength(1);
  });

  it("without the project setting, the slow provider is waited for", async () => {
    const started = Date.now();
    const { res } = await post(plain.key, body(`slow [[fake@${PRIMARY}:delay=1500]]`));
    const json = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(json.metadata.used_provider).toBe(PRIMARY);
    expect(json.metadata.routing).toHaveLength(1);
  });

  it("a hedge that fails leaves the first attempt to finish", async () => {
    const started = Date.now();
    // Every provider but the first fails at once; the first answers after 2 s, well after the
    // hedge delay (no evidence yet: 300 ms plus 500 ms for the 20 tokens it may write).
    const others = ["groq", "together-ai", "fireworks", "cerebras", "nebius", "novita"].map((p) => `[[fake@${p}:status=500]]`).join(" ");
    const { res } = await post(hedged.key, body(`${others} [[fake@${PRIMARY}:delay=2000]]`));
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(json.metadata.used_provider).toBe(PRIMARY);
    const routing = json.metadata.routing as Json[];
    const seen = JSON.stringify(routing.map((r) => [r.provider, r.succeeded, r.error_type ?? null, r.start_ms]));
    expect(routing.length, seen).toBeGreaterThan(1);
    expect(routing.at(-1), seen).toMatchObject({ provider: PRIMARY, succeeded: true });
    expect(routing.slice(0, -1).every((r) => r.succeeded === false && r.error_type !== "hedge_cancelled"), seen).toBe(true);
  });
});

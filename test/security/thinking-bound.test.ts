/**
 * Extended thinking cannot overrun limits. The Claude adapters (Anthropic, and
 * Claude on Bedrock) raise `max_tokens` upstream to make room for the thinking budget (16 asked,
 * 24,592 sent for `reasoning_effort: "high"`); admission must reserve what is sent, not what was
 * asked. The fake models think until they reach the cap they were sent (`[[fake:think_max]]`),
 * the worst case a real model may bill. A key with a $0.01 limit and an organization with $0.01 of
 * credits, each hit by 20 concurrent thinking requests, end within one request of their limit.
 */
import { describe, expect, it } from "vitest";
import { addKey, call, seedOrg } from "../helpers/fixtures";
import { settledBalance, settledSpend } from "../resilience/helpers";
import { estimateUpperBound } from "../../src/billing/estimate";
import { adapterFor } from "../../src/providers/registry";
import { findModel, getProvider } from "../../src/catalog";
import { buildAnthropicBody } from "../../src/providers/anthropic/request";
import { buildConverseBody } from "../../src/providers/bedrock/request";
import type { ChatRequest } from "../../src/providers/types";
import { testTarget } from "../../src/providers/test-target";

const LIMIT_PICO = 10_000_000_000n; // $0.01
const N = 20;
/** Sonnet: $15 per million output tokens, $3 per million input tokens. */
const OUTPUT_PICO = 15_000_000n;
const INPUT_PICO = 3_000_000n;
/** What one request costs at most: 24,576 thinking + 16 asked output tokens, plus a short prompt. */
const ONE_REQUEST = (24_576n + 16n) * OUTPUT_PICO + 200n * INPUT_PICO;

const thinking = (model: string, i: number) => ({
  model,
  max_tokens: 16,
  reasoning_effort: "high",
  messages: [{ role: "user", content: `think hard ${i} [[fake:think_max]]` }],
});

const post = (path: string, key: string, body: unknown) =>
  call(path, { method: "POST", key, headers: { "content-type": "application/json", "x-no-cache": "true" }, body: JSON.stringify(body) });

async function statuses(results: Response[]): Promise<number[]> {
  return Promise.all(results.map(async (r) => (await r.text(), r.status)));
}

describe("extended thinking and key limits", () => {
  it.each(["anthropic/claude-sonnet-4", "aws-bedrock/claude-sonnet-4"])("%s: 20 concurrent thinking requests end within one request of a $0.01 key limit", async (model) => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "0.01" });
    const codes = await statuses(await Promise.all(Array.from({ length: N }, (_, i) => post("/v1/chat/completions", token, thinking(model, i)))));
    expect(codes.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(codes.every((s) => s === 200 || s === 401 || s === 429), codes.join(",")).toBe(true);
    const { usage, logged, rows } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    // The fake billed the whole raised cap: the overrun the bound has to cover is real.
    expect(rows.some((r) => BigInt(r.costPico) > 24_000n * OUTPUT_PICO)).toBe(true);
    expect(usage).toBeLessThanOrEqual(LIMIT_PICO + ONE_REQUEST);
  });
});

describe("extended thinking and organization credits", () => {
  it("/v1/messages with thinking.budget_tokens: $0.01 of credits end no lower than minus one request", async () => {
    const org = await seedOrg({ creditsUsd: 0.01 });
    const a = await addKey(org);
    const b = await addKey(org);
    const body = (i: number) => ({
      model: "anthropic/claude-sonnet-4",
      max_tokens: 16,
      thinking: { type: "enabled", budget_tokens: 20_000 },
      messages: [{ role: "user", content: `think ${i} [[fake:think_max]]` }],
    });
    const codes = await statuses(await Promise.all(Array.from({ length: N }, (_, i) => post("/v1/messages", i % 2 ? a.token : b.token, body(i)))));
    expect(codes.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(codes.every((s) => s === 200 || s === 402 || s === 429), codes.join(",")).toBe(true);
    expect(await settledBalance(org.orgId, [a.row.id, b.row.id])).toBeGreaterThanOrEqual(-ONE_REQUEST);
  });
});

describe("the bound is what the adapter sends", () => {
  const req = (over: Partial<ChatRequest>): ChatRequest => ({ model: "m", messages: [{ role: "user", content: "x" }], ...over });

  it("reserves the raised max_tokens of the Anthropic and Bedrock bodies, and the caller's cap without thinking", () => {
    const claude = findModel("claude-sonnet-4")!;
    for (const mapping of claude.mappings) {
      const adapter = adapterFor(getProvider(mapping.providerId)!.wireFormat);
      for (const effort of [undefined, "minimal", "low", "medium", "high"] as const) {
        for (const cap of [16, 5_000, 30_000, undefined]) {
          const r = req({ ...(cap === undefined ? {} : { max_tokens: cap }), ...(effort ? { reasoning_effort: effort } : {}) });
          let sent: number | undefined;
          if (mapping.providerId === "anthropic") sent = buildAnthropicBody(r, testTarget({ wireFormat: "anthropic", mapping }), { stream: false }).max_tokens as number;
          else if (mapping.providerId === "aws-bedrock") sent = (buildConverseBody(r, testTarget({ wireFormat: "bedrock", mapping })).inferenceConfig as { maxTokens?: number } | undefined)?.maxTokens;
          else continue;
          const bound = adapter.outputTokensBound?.(r, mapping);
          expect(bound, `${mapping.providerId} ${effort} ${cap}`).toBe(sent ?? mapping.maxOutput);
          // And admission's estimate prices that many output tokens.
          const reserved = estimateUpperBound(r, [{ ...mapping, outputTokens: bound! }]);
          expect(reserved).toBeGreaterThanOrEqual(BigInt(sent ?? mapping.maxOutput) * OUTPUT_PICO);
        }
      }
    }
  });
});

/**
 * Claude on Vertex AI goes in Anthropic's format to the `anthropic` publisher's `:rawPredict` /
 * `:streamRawPredict` (the fake Vertex answers a Claude model under `publishers/google` with the
 * real 404), with thinking, tools and signed reasoning as on Anthropic's API.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { googleAdapter } from "./index";

const target = testTarget({
  wireFormat: "google",
  providerId: "google-vertex",
  baseUrl: `${env.FAKE_UPSTREAM_URL}/google-vertex`,
  externalId: "claude-sonnet-4@20250514",
  apiKey: "ya29.token",
  settings: { GOOGLE_VERTEX_PROJECT: "proj", GOOGLE_VERTEX_LOCATION: "us-east5" },
});
const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];

describe("Claude on Vertex", () => {
  it("sends Anthropic's body to publishers/anthropic :rawPredict and parses Anthropic's answer", async () => {
    const req: ChatRequest = { model: "m", max_tokens: 100, messages: [{ role: "system", content: "sys" }, { role: "user", content: "hello there" }] };
    const upstream = await builtRequest(googleAdapter, req, target, { stream: false });
    expect(new URL(upstream.url).pathname).toBe("/google-vertex/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4%4020250514:rawPredict");
    const body = (await upstream.clone().json()) as Record<string, unknown>;
    expect(body).toMatchObject({ anthropic_version: "vertex-2023-10-16", max_tokens: 100, system: [{ type: "text", text: "sys" }] });
    expect(body.model).toBeUndefined();
    expect(upstream.headers.get("authorization")).toBe("Bearer ya29.token");
    const res = await fetch(upstream);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const parsed = googleAdapter.parseResponse(JSON.parse(text), target, req);
    expect(parsed.choices[0]).toMatchObject({ message: { content: "Hello from google-vertex/claude-sonnet-4@20250514" }, finish_reason: "stop" });
    expect(parsed.usage.promptTokens).toBe(6);
  });

  it("streams through :streamRawPredict: reasoning with its signature, tool calls, finish", async () => {
    const req: ChatRequest = { model: "m", tools, reasoning_effort: "low", max_tokens: 5000, messages: [{ role: "user", content: "weather? [[fake:tools,reasoning]]" }] };
    const upstream = await builtRequest(googleAdapter, req, target, { stream: true });
    expect(upstream.url).toMatch(/:streamRawPredict$/);
    expect(((await upstream.clone().json()) as { thinking?: unknown }).thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    const res = await fetch(upstream);
    expect(res.status).toBe(200);
    const events = await collectEvents(googleAdapter.parseStream(res.body!, target, req));
    const reasoning = events.flatMap((e) => (e.type === "delta" && e.delta.reasoning ? [e.delta.reasoning] : [])).join("");
    expect(reasoning).toBe("Thinking about claude-sonnet-4@20250514 step by step.");
    expect(events.some((e) => e.type === "delta" && e.delta.reasoning_details?.[0]?.type === "reasoning.text")).toBe(true);
    const args = events.flatMap((e) => (e.type === "delta" ? (e.delta.tool_calls ?? []) : [])).map((t) => t.function.arguments ?? "").join("");
    expect(args).toBe('{"city":"test"}');
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
  });

  it("raises the output bound for thinking as on Anthropic's API; Gemini keeps the caller's cap", () => {
    const req: ChatRequest = { model: "m", reasoning_effort: "high", max_tokens: 1000, messages: [{ role: "user", content: "x" }] };
    expect(googleAdapter.outputTokensBound?.(req, target.mapping)).toBeGreaterThan(1000);
    expect(googleAdapter.outputTokensBound?.(req, { ...target.mapping, externalId: "gemini-2.5-pro" })).toBe(1000);
  });
});

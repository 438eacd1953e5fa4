import { afterEach, describe, expect, it, vi } from "vitest";
import type { WireFormat } from "../catalog/types";
import type { ChatRequest, UpstreamTarget } from "./types";
import { adapterFor } from "./registry";
import { builtRequest, testTarget } from "./test-target";

const sigV4 = { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "secret", AWS_BEDROCK_REGION: "us-east-1" };

describe("adapterFor", () => {
  it.each<[WireFormat, RegExp]>([
    ["openai", /\/chat\/completions$/],
    ["azure", /\/openai\/deployments\/test-model\/chat\/completions\?api-version=/],
    ["anthropic", /\/v1\/messages$/],
    ["google", /\/v1beta\/models\/test-model:generateContent$/],
    ["bedrock", /\/model\/test-model\/converse$/],
  ])("%s builds requests for its own API", async (format, url) => {
    const target = testTarget({ wireFormat: format, providerId: format === "google" ? "google-ai-studio" : "openai" });
    const r = await builtRequest(adapterFor(format), { model: "m", messages: [{ role: "user", content: "hi" }] }, target, { stream: false });
    expect(r.method).toBe("POST");
    expect(r.url).toMatch(url);
  });

  it.each<[WireFormat, Record<string, string>]>([
    ["openai", {}],
    ["azure", {}],
    ["anthropic", {}],
    ["google", {}],
    ["bedrock", {}],
    ["bedrock", { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "secret", AWS_BEDROCK_REGION: "us-east-1" }],
  ])("%s requests carry the abort signal (timeouts and client aborts reach the upstream call) and never follow redirects %#", async (format, settings) => {
    const target = { ...testTarget({ wireFormat: format, providerId: format === "google" ? "google-ai-studio" : "openai" }), settings };
    const abort = new AbortController();
    const r = await builtRequest(adapterFor(format), { model: "m", messages: [{ role: "user", content: "hi" }] }, target, { stream: true, signal: abort.signal });
    expect(r.signal.aborted).toBe(false);
    // Built with redirects off, so runAttempt's fetch needs no copy of the Request.
    expect(r.redirect).toBe("manual");
    abort.abort();
    expect(r.signal.aborted).toBe(true);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it.each<[string, UpstreamTarget]>([
    ["openai", testTarget({ wireFormat: "openai", apiKey: "sk-o" })],
    ["azure", testTarget({ wireFormat: "azure", providerId: "azure", apiKey: "az" })],
    ["anthropic", testTarget({ wireFormat: "anthropic", providerId: "anthropic", apiKey: "ak" })],
    ["google AI Studio", testTarget({ wireFormat: "google", providerId: "google-ai-studio", apiKey: "gk" })],
    ["google Vertex", testTarget({ wireFormat: "google", providerId: "google-vertex", apiKey: "ya29.t" })],
    ["Claude on Vertex", testTarget({ wireFormat: "google", providerId: "google-vertex", externalId: "claude-sonnet-4@20250514", apiKey: "ya29.t" })],
    ["bedrock API key", testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", apiKey: "bk" })],
    ["bedrock SigV4", testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", apiKey: "", settings: sigV4 })],
  ])("%s: buildCall is fetch's (url, init), with its signal, redirects off and the body as the string built", async (_name, target) => {
    // SigV4 signs the time: both builds fall within one faked second.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-03-04T05:06:07Z"));
    const adapter = adapterFor(target.provider.wireFormat);
    const signal = new AbortController().signal;
    const req: ChatRequest = { model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
    for (const stream of [false, true]) {
      const call = await adapter.buildCall(req, target, { stream, signal });
      expect(call.init.method).toBe("POST");
      expect(call.init.redirect).toBe("manual");
      expect(call.init.signal).toBe(signal);
      // The body goes as the string built, so fetch sends (and SigV4 signs) exactly these bytes.
      expect(typeof call.init.body).toBe("string");
      // The Request a test reads is the one fetch makes of the call.
      const made = await builtRequest(adapter, req, target, { stream, signal });
      expect([made.url, made.method, made.redirect, [...made.headers]]).toEqual([call.url, "POST", "manual", [...new Headers(call.init.headers)]]);
      expect(await made.text()).toBe(call.init.body);
    }
  });
});

import { describe, expect, it } from "vitest";
import type { WireFormat } from "../catalog/types";
import { adapterFor } from "./registry";
import { testTarget } from "./test-target";

describe("adapterFor", () => {
  it.each<[WireFormat, RegExp]>([
    ["openai", /\/chat\/completions$/],
    ["azure", /\/openai\/deployments\/test-model\/chat\/completions\?api-version=/],
    ["anthropic", /\/v1\/messages$/],
    ["google", /\/v1beta\/models\/test-model:generateContent$/],
    ["bedrock", /\/model\/test-model\/converse$/],
  ])("%s builds requests for its own API", async (format, url) => {
    const target = testTarget({ wireFormat: format, providerId: format === "google" ? "google-ai-studio" : "openai" });
    const r = await adapterFor(format).buildRequest({ model: "m", messages: [{ role: "user", content: "hi" }] }, target, { stream: false });
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
    const r = await adapterFor(format).buildRequest({ model: "m", messages: [{ role: "user", content: "hi" }] }, target, { stream: true, signal: abort.signal });
    expect(r.signal.aborted).toBe(false);
    // Built with redirects off, so runAttempt's fetch needs no copy of the Request.
    expect(r.redirect).toBe("manual");
    abort.abort();
    expect(r.signal.aborted).toBe(true);
  });
});

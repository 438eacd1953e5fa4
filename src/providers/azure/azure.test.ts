import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { azureAdapter } from "./index";

const hi: ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 5 };

describe("azure adapter", () => {
  it("uses the deployment URL, api-version (default and from settings) and the api-key header", async () => {
    const t = testTarget({ wireFormat: "azure", providerId: "azure", baseUrl: "https://res.openai.azure.com", externalId: "my deploy", apiKey: "az", quirks: { maxTokensField: "max_completion_tokens" } });
    const r = await builtRequest(azureAdapter, hi, t, { stream: true });
    expect(r.url).toBe("https://res.openai.azure.com/openai/deployments/my%20deploy/chat/completions?api-version=2024-10-21");
    expect(r.headers.get("api-key")).toBe("az");
    expect(r.headers.get("authorization")).toBeNull();
    // The OpenAI body transform (quirks included) is reused as is.
    expect(await r.json()).toEqual({ model: "my deploy", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 5, stream: true, stream_options: { include_usage: true } });
    const v = await builtRequest(azureAdapter, hi, { ...t, settings: { AZURE_API_VERSION: "2025-01-01-preview" } }, { stream: false });
    expect(v.url).toMatch(/\?api-version=2025-01-01-preview$/);
  });

  it("parses Azure content_filter finishes", () => {
    const t = testTarget({ wireFormat: "azure" });
    const parsed = azureAdapter.parseResponse({ choices: [{ index: 0, message: { role: "assistant", content: null }, finish_reason: "content_filter" }], usage: { prompt_tokens: 1, completion_tokens: 0 } }, t);
    expect(parsed.choices[0]?.finish_reason).toBe("content_filter");
  });

  it("talks to the fake Azure upstream, streamed and not", async () => {
    const t = testTarget({ wireFormat: "azure", providerId: "azure", baseUrl: `${env.FAKE_UPSTREAM_URL}/azure`, externalId: "my-deploy", apiKey: "az" });
    const res = await fetch(await builtRequest(azureAdapter, hi, t, { stream: false }));
    expect(res.status).toBe(200);
    expect(azureAdapter.parseResponse(await res.json(), t).choices[0]?.message.content).toBe("Hello from azure/my-deploy");
    const s = await fetch(await builtRequest(azureAdapter, hi, t, { stream: true }));
    const events = await collectEvents(azureAdapter.parseStream(s.body!, t));
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "stop" });
    expect(events.at(-1)).toMatchObject({ type: "usage", usage: { promptTokens: 4, completionTokens: 3 } });
    const noKey = await fetch(`${env.FAKE_UPSTREAM_URL}/azure/openai/deployments/x/chat/completions?api-version=1`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(noKey.status).toBe(401);
  });
});

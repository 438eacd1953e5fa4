import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../types";
import { builtRequest, bytesStream, collectEvents, testTarget } from "../test-target";
import { googleAdapter } from "./index";
import { buildGeminiBody } from "./request";

const studio = testTarget({ wireFormat: "google", providerId: "google-ai-studio", baseUrl: "https://gl.test", externalId: "gemini-x", apiKey: "gk" });
const vertex = testTarget({ wireFormat: "google", providerId: "google-vertex", baseUrl: "https://vx.test", externalId: "gemini-x", apiKey: "tok", settings: { GOOGLE_VERTEX_PROJECT: "proj", GOOGLE_VERTEX_LOCATION: "us-central1" } });
const hi: ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }] };

describe("google adapter: request", () => {
  it("builds AI Studio and Vertex URLs and auth", async () => {
    const a = await builtRequest(googleAdapter, hi, studio, { stream: false });
    expect(a.url).toBe("https://gl.test/v1beta/models/gemini-x:generateContent");
    expect(a.headers.get("x-goog-api-key")).toBe("gk");
    const s = await builtRequest(googleAdapter, hi, studio, { stream: true });
    expect(s.url).toBe("https://gl.test/v1beta/models/gemini-x:streamGenerateContent?alt=sse");
    const v = await builtRequest(googleAdapter, hi, vertex, { stream: true });
    expect(v.url).toBe("https://vx.test/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse");
    expect(v.headers.get("authorization")).toBe("Bearer tok");
    expect(v.headers.get("x-goog-api-key")).toBeNull();
    const vDefault = await builtRequest(googleAdapter, hi, { ...vertex, settings: {} }, { stream: false });
    expect(vDefault.url).toBe("https://vx.test/v1/projects/-/locations/global/publishers/google/models/gemini-x:generateContent");
    expect(await a.json()).toEqual(await v.json());
  });

  it("maps messages, system, generation config, tools and the tool round trip", () => {
    const body = buildGeminiBody(
      {
        model: "m",
        temperature: 0.4, top_p: 0.8, max_tokens: 99, stop: "END", seed: 3,
        response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } } },
        reasoning_effort: "low",
        tools: [{ type: "function", function: { name: "get_weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } }, additionalProperties: false } } }],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/" } }] },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
          { role: "tool", tool_call_id: "c1", content: '{"temp":20}' },
          { role: "tool", tool_call_id: "c1", content: "plain" },
        ],
      },
      studio,
    );
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: "be brief" }] },
      contents: [
        { role: "user", parts: [{ text: "look" }, { inlineData: { mimeType: "image/jpeg", data: "/9j/" } }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
        { role: "user", parts: [
          { functionResponse: { name: "get_weather", response: { temp: 20 } } },
          { functionResponse: { name: "get_weather", response: { result: "plain" } } },
        ] },
      ],
      generationConfig: {
        temperature: 0.4, topP: 0.8, maxOutputTokens: 99, stopSequences: ["END"], seed: 3,
        responseMimeType: "application/json",
        responseSchema: { type: "object", properties: { a: { type: "string" } } },
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      },
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } } } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
    });
  });

  it("asks for image output, json mode, and rejects unknown tool_call ids", () => {
    const b = buildGeminiBody({ ...hi, modalities: ["image", "text"], response_format: { type: "json_object" }, tool_choice: "auto" }, studio);
    expect(b.generationConfig).toEqual({ responseModalities: ["TEXT", "IMAGE"], responseMimeType: "application/json" });
    expect(() => buildGeminiBody({ model: "m", messages: [{ role: "tool", tool_call_id: "nope", content: "x" }] }, studio)).toThrow(/unknown tool_call_id/);
  });

  it("guesses an image URL's MIME type from known extensions only: `.constructor` gets the default", () => {
    const mimeOf = (url: string) => {
      const b = buildGeminiBody({ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] }, studio);
      return JSON.parse(JSON.stringify(b)).contents[0].parts[0].fileData.mimeType as unknown;
    };
    expect(mimeOf("https://img.test/a.png")).toBe("image/png");
    expect(mimeOf("https://img.test/a.PDF?x=1")).toBe("application/pdf");
    expect(mimeOf("https://img.test/a.tiff")).toBe("image/jpeg");
    expect(mimeOf("https://img.test/a.constructor")).toBe("image/jpeg");
    expect(mimeOf("https://img.test/a.CONSTRUCTOR#x")).toBe("image/jpeg");
  });

  it("keeps a tool parameter named __proto__ as a property of the schema", () => {
    const parameters = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"toString":{"type":"number"}},"additionalProperties":false}') as Record<string, unknown>;
    const b = buildGeminiBody({ ...hi, tools: [{ type: "function", function: { name: "f", parameters } }] }, studio);
    const sent = JSON.parse(JSON.stringify(b)) as { tools: Array<{ functionDeclarations: Array<{ parameters: unknown }> }> };
    expect(sent.tools[0]!.functionDeclarations[0]!.parameters).toEqual(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"toString":{"type":"number"}}}'));
  });
});

describe("google adapter: response", () => {
  it("parses text, thoughts, function calls, images, finish and usage (completion includes thoughts)", () => {
    const parsed = googleAdapter.parseResponse(
      {
        responseId: "r1",
        modelVersion: "gemini-x-001",
        candidates: [{
          index: 0,
          finishReason: "STOP",
          content: { role: "model", parts: [
            { text: "thinking...", thought: true },
            { text: "Hi" },
            { functionCall: { name: "f", args: { a: 1 } } },
            { functionCall: { name: "g", args: {} } },
            { inlineData: { mimeType: "image/png", data: "AAA" } },
          ] },
        }],
        usageMetadata: {
          promptTokenCount: 100, candidatesTokenCount: 40, thoughtsTokenCount: 25, cachedContentTokenCount: 60, totalTokenCount: 165,
          promptTokensDetails: [{ modality: "TEXT", tokenCount: 90 }, { modality: "IMAGE", tokenCount: 10 }],
          candidatesTokensDetails: [{ modality: "IMAGE", tokenCount: 30 }],
        },
      },
      studio,
    );
    const choice = parsed.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Hi");
    expect(choice.message.reasoning).toBe("thinking...");
    expect(choice.message.tool_calls).toEqual([
      { id: "call_r1_0", type: "function", function: { name: "f", arguments: '{"a":1}' } },
      { id: "call_r1_1", type: "function", function: { name: "g", arguments: "{}" } },
    ]);
    expect(choice.message.images).toEqual([{ type: "image_url", image_url: { url: "data:image/png;base64,AAA" } }]);
    expect(parsed.usage).toMatchObject({ promptTokens: 100, completionTokens: 65, reasoningTokens: 25, cachedTokens: 60, imageInputTokens: 10, imageOutputTokens: 30 });
    expect(parsed.upstreamModel).toBe("gemini-x-001");
  });

  it.each([["MAX_TOKENS", "length"], ["SAFETY", "content_filter"], ["RECITATION", "content_filter"], ["STOP", "stop"]])("finishReason %s -> %s", (raw, fr) => {
    expect(googleAdapter.parseResponse({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: raw }] }, studio).choices[0]?.finish_reason).toBe(fr);
  });

  it("reports a blocked prompt as content_filter and Google errors by status", () => {
    expect(googleAdapter.parseResponse({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }, studio).choices[0]?.finish_reason).toBe("content_filter");
    expect(googleAdapter.parseError(429, JSON.stringify({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } }))).toEqual({ message: "quota", type: "RESOURCE_EXHAUSTED" });
  });
});

describe("google adapter: stream", () => {
  it("emits deltas, whole tool calls with stable indexes, finish and usage", async () => {
    const c = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    const events = await collectEvents(googleAdapter.parseStream(bytesStream([
      c({ candidates: [{ content: { parts: [{ text: "hm", thought: true }] } }] }),
      c({ candidates: [{ content: { parts: [{ text: "Hel" }] } }] }),
      c({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: { a: 1 } } }] } }] }),
      c({ candidates: [{ content: { parts: [{ functionCall: { name: "g", args: {} } }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 6, thoughtsTokenCount: 2 } }),
    ]), studio));
    const deltas = events.flatMap((e) => (e.type === "delta" ? [e.delta] : []));
    expect(deltas[0]).toEqual({ role: "assistant" });
    expect(deltas[1]).toEqual({ reasoning: "hm" });
    expect(deltas[2]).toEqual({ content: "Hel" });
    expect(deltas[3]?.tool_calls?.[0]).toMatchObject({ index: 0, type: "function", function: { name: "f", arguments: '{"a":1}' } });
    expect(deltas[4]?.tool_calls?.[0]).toMatchObject({ index: 1, function: { name: "g", arguments: "{}" } });
    expect(deltas[3]?.tool_calls?.[0]?.id).not.toBe(deltas[4]?.tool_calls?.[0]?.id);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    expect(events.at(-1)).toMatchObject({ type: "usage", usage: { promptTokens: 4, completionTokens: 8, reasoningTokens: 2 } });
  });
});

describe("google adapter: thought signatures (Gemini 3 function calling)", () => {
  const gemini3 = testTarget({ wireFormat: "google", providerId: "google-ai-studio", baseUrl: "https://gl.test", externalId: "gemini-3-pro-preview", apiKey: "gk" });
  const call = (id: string, name: string, signature?: string) => ({
    id,
    type: "function" as const,
    function: { name, arguments: "{}" },
    ...(signature ? { extra_content: { google: { thought_signature: signature } } } : {}),
  });
  const turn = (calls: ReturnType<typeof call>[]): ChatRequest => ({
    model: "m",
    messages: [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: calls },
      ...calls.map((c) => ({ role: "tool" as const, tool_call_id: c.id, content: "{}" })),
    ],
  });
  const modelParts = (body: Record<string, unknown>) => (body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>).find((c) => c.role === "model")!.parts;

  it("returns Gemini's signature on the tool call (JSON and stream), where OpenAI-compatible clients keep it", async () => {
    const parsed = googleAdapter.parseResponse(
      { candidates: [{ content: { parts: [{ functionCall: { name: "f", args: {} }, thoughtSignature: "sig-A" }, { functionCall: { name: "g", args: {} } }] }, finishReason: "STOP" }] },
      gemini3,
    );
    const calls = parsed.choices[0]!.message.tool_calls!;
    expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: "sig-A" } });
    expect(calls[1]!.extra_content).toBeUndefined();

    const events = await collectEvents(googleAdapter.parseStream(bytesStream([
      `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: {} }, thoughtSignature: "sig-B" }] }, finishReason: "STOP" }] })}\r\n\r\n`,
    ]), gemini3));
    const delta = events.find((e) => e.type === "delta" && e.delta.tool_calls);
    expect(delta?.type === "delta" && delta.delta.tool_calls?.[0]?.extra_content).toEqual({ google: { thought_signature: "sig-B" } });
  });

  it("sends the signatures back exactly on the next turn", () => {
    const parts = modelParts(buildGeminiBody(turn([call("c1", "f", "sig-A"), call("c2", "g")]), gemini3));
    expect(parts).toEqual([
      { functionCall: { name: "f", args: {} }, thoughtSignature: "sig-A" },
      { functionCall: { name: "g", args: {} } },
    ]);
  });

  it("without a signature (a client that dropped it, another model's history), Gemini 3 gets Google's documented skip value on the first call only", () => {
    const parts = modelParts(buildGeminiBody(turn([call("c1", "f"), call("c2", "g")]), gemini3));
    expect(parts).toEqual([
      { functionCall: { name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { name: "g", args: {} } },
    ]);
    // Older generations do not validate signatures: nothing is invented for them.
    const older = modelParts(buildGeminiBody(turn([call("c1", "f")]), { ...gemini3, mapping: { ...gemini3.mapping, externalId: "gemini-2.5-flash" } }));
    expect(older).toEqual([{ functionCall: { name: "f", args: {} } }]);
  });
});

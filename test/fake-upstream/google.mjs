// @ts-check
/**
 * Fake Google Gemini upstream, shaped like the Gemini API reference:
 * - AI Studio: POST /google-ai-studio/v1beta/models/<model>:generateContent | :streamGenerateContent?alt=sse
 *   (x-goog-api-key header or ?key=)
 * - Vertex AI: POST /google-vertex/v1/projects/<p>/locations/<l>/publishers/google/models/<model>:<method>
 *   (Authorization: Bearer <access token>, or x-goog-api-key in express mode)
 */
import { TINY_PNG_BASE64, failEarly, parseDirectives, pieces, plan, streamWriter } from "./fake-common.mjs";

const AI_STUDIO = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const VERTEX = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

let seq = 0;

/** @param {any} content */
const textOf = (content) =>
  Array.isArray(content?.parts) ? content.parts.map((/** @type {any} */ p) => (typeof p?.text === "string" ? p.text : "")).join(" ") : "";

/** @param {number} status */
function errorBody(status) {
  const s = status === 429 ? "RESOURCE_EXHAUSTED" : status === 503 ? "UNAVAILABLE" : status === 401 ? "UNAUTHENTICATED" : status === 403 ? "PERMISSION_DENIED" : status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
  return { error: { code: status, message: `fake upstream error ${status}`, status: s } };
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {string} message */
function reject(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code: status, message, status: status === 401 ? "UNAUTHENTICATED" : "INVALID_ARGUMENT" } }));
}

const FINISH = { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP" };

/**
 * Gemini 3 thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): the first
 * functionCall part of a model turn carries one, and a request whose model turn has function calls
 * without it on the first call is a 400. Google's documented skip values pass.
 */
const ENFORCES_SIGNATURES = /^gemini-(?:[3-9]|\d{2,})/;
const SKIP_SIGNATURES = new Set(["skip_thought_signature_validator", "context_engineering_is_the_way_to_go"]);
/** @param {any[]} contents @returns {string | null} the error message, or null when valid */
function missingSignature(contents) {
  for (const [i, c] of contents.entries()) {
    if (c?.role !== "model") continue;
    const calls = (c.parts ?? []).filter((/** @type {any} */ p) => p?.functionCall);
    const sig = calls[0]?.thoughtSignature;
    if (calls.length && !(typeof sig === "string" && (sig.startsWith("fake-sig-") || SKIP_SIGNATURES.has(sig)))) {
      return `Function call \`${calls[0].functionCall.name}\` in the ${i + 1}. content block is missing a \`thought_signature\`.`;
    }
  }
  return null;
}

/** @type {import("./server.mjs").FakeRoute[]} */
export const googleRoutes = [
  {
    name: "gemini generateContent",
    match: (req) =>
      req.method === "POST" &&
      ((req.provider === "google-ai-studio" && AI_STUDIO.test(req.path)) || (req.provider === "google-vertex" && VERTEX.test(req.path))),
    async handle(req, res) {
      const vertex = req.provider === "google-vertex";
      const m = (vertex ? VERTEX : AI_STUDIO).exec(req.path);
      const model = decodeURIComponent(m?.[1] ?? "");
      const streaming = m?.[2] === "streamGenerateContent";
      // Vertex: an OAuth access token, or an API key in express mode; AI Studio: an API key.
      if (vertex ? !/^Bearer \S+/.test(String(req.headers.authorization ?? "")) && !req.headers["x-goog-api-key"] : !req.headers["x-goog-api-key"] && !req.query.get("key")) {
        return reject(res, 401, "Request is missing required authentication credential.");
      }
      // Claude is Anthropic's publisher model on Vertex (rawPredict, anthropic.mjs): not under publishers/google.
      if (vertex && model.startsWith("claude")) return reject(res, 404, `Publisher Model \`${req.path.split(":")[0]?.slice(1)}\` was not found or your project does not have access to it.`);
      const body = req.body;
      if (!body || !Array.isArray(body.contents)) return reject(res, 400, "contents is required");
      /** @type {any[]} */
      const contents = body.contents;
      for (let i = 1; i < contents.length; i++) {
        if (contents[i].role === contents[i - 1].role) return reject(res, 400, "Please ensure that multiturn requests alternate between user and model.");
      }
      const signatures = ENFORCES_SIGNATURES.test(model);
      const unsigned = signatures ? missingSignature(contents) : null;
      if (unsigned) return reject(res, 400, unsigned);
      const lastUser = [...contents].reverse().find((c) => c?.role === "user" && c.parts?.some((/** @type {any} */ p) => typeof p?.text === "string"));
      const d = parseDirectives(textOf(lastUser), req.provider);
      if (failEarly(d, res, errorBody)) return;
      const last = contents[contents.length - 1];
      const fr = last?.parts?.find((/** @type {any} */ p) => p?.functionResponse)?.functionResponse;
      const toolResult = fr ? (typeof fr.response?.result === "string" ? fr.response.result : JSON.stringify(fr.response)) : undefined;
      /** @type {any[]} */
      const decls = Array.isArray(body.tools) ? body.tools.flatMap((/** @type {any} */ t) => t.functionDeclarations ?? []) : [];
      const p = plan({
        provider: req.provider,
        model,
        directives: d,
        allText: [textOf(body.systemInstruction), ...contents.map(textOf)].join(" "),
        tools: decls.map((f) => ({ name: f.name, parameters: f.parameters })),
        toolResult,
      });
      const responseId = `fake-resp-${++seq}`;
      const usageMetadata = {
        promptTokenCount: p.usage.prompt,
        candidatesTokenCount: p.usage.completion - p.usage.reasoning,
        totalTokenCount: p.usage.prompt + p.usage.completion,
        ...(p.usage.reasoning ? { thoughtsTokenCount: p.usage.reasoning } : {}),
        ...(p.usage.cached ? { cachedContentTokenCount: p.usage.cached } : {}),
        promptTokensDetails: [{ modality: "TEXT", tokenCount: p.usage.prompt }],
        ...(p.image ? { candidatesTokensDetails: [{ modality: "TEXT", tokenCount: p.usage.completion - p.usage.reasoning - p.usage.image }, { modality: "IMAGE", tokenCount: p.usage.image }] } : {}),
      };
      /** @type {any[]} */
      const parts = [];
      if (p.reasoning) parts.push({ text: p.reasoning, thought: true });
      if (p.text) parts.push({ text: p.text });
      /** @type {(t: any, i: number) => any} */
      const callPart = (t, i) => ({ functionCall: { name: t.name, args: t.args }, ...(signatures && i === 0 ? { thoughtSignature: `fake-sig-${responseId}` } : {}) });
      p.toolCalls.forEach((t, i) => parts.push(callPart(t, i)));
      if (p.image) parts.push({ inlineData: { mimeType: "image/png", data: TINY_PNG_BASE64 } });
      const finishReason = FINISH[p.finish];
      const modelVersion = model;

      if (!streaming) {
        res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
        if (d.has("malformed")) return void res.end('{"candidates": [{"content": ');
        res.end(JSON.stringify({ candidates: [{ content: { parts, role: "model" }, finishReason, index: 0 }], usageMetadata, modelVersion, responseId }));
        return;
      }
      if (req.query.get("alt") !== "sse") return reject(res, 400, "fake upstream only streams with alt=sse");
      /** @param {any[]} chunkParts @param {string | undefined} finish */
      const chunk = (chunkParts, finish) =>
        `data: ${JSON.stringify({ candidates: [{ content: { parts: chunkParts, role: "model" }, ...(finish ? { finishReason: finish } : {}), index: 0 }], usageMetadata, modelVersion, responseId })}\r\n\r\n`;
      /** @type {string[]} */
      const frames = [];
      if (p.reasoning) for (const r of pieces(p.reasoning, 3)) frames.push(chunk([{ text: r, thought: true }], undefined));
      if (p.text) for (const t of pieces(p.text, d.has("huge") ? 50 : 2)) frames.push(chunk([{ text: t }], undefined));
      if (p.toolCalls.length) frames.push(chunk(p.toolCalls.map(callPart), undefined));
      if (p.image) frames.push(chunk([{ inlineData: { mimeType: "image/png", data: TINY_PNG_BASE64 } }], undefined));
      if (d.has("error_midstream")) frames.push(`data: ${JSON.stringify(errorBody(503))}\r\n\r\n`);
      else if (d.has("malformed")) frames.push("data: {not json\r\n\r\n");
      else frames.push(chunk([{ text: "" }], finishReason));
      res.writeHead(200, { "content-type": "text/event-stream" });
      const w = streamWriter(d, res, frames.length);
      for (const f of frames) if (!(await w.write(f))) return;
      w.end();
    },
  },
];

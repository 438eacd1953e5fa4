// @ts-check
/**
 * Fake image generation upstreams, shaped like the providers' public API references:
 *  - OpenAI Images: `POST /openai/images/generations` -> `{created, data:[{b64_json}], usage}`;
 *  - Alibaba DashScope: `POST /alibaba/api/v1/services/aigc/multimodal-generation/generation`
 *    -> `{output:{choices:[{message:{content:[{image:url}]}}]}, usage:{image_count}}`, the URL
 *    served by `GET /alibaba/__images/<name>.png`;
 *  - Gemini: `POST /google-ai-studio/v1beta/models/<model>:generateContent` with
 *    `responseModalities` containing IMAGE -> `inlineData` parts.
 * Directives (`[[fake:status=503]]`, `[[fake@alibaba:status=500]]`, ...) come from fake-common.
 * A hostile DashScope (BYOK `baseUrl`), for the security suite: `[[fake:image_url=<url>]]` names
 * that URL as the result (e.g. an internal address), and `GET /alibaba/__redirect` answers a 302
 * to `/internal/secret` on the same host (videos.mjs serves it).
 */
import { TINY_PNG_BASE64, failEarly, parseDirectives } from "./fake-common.mjs";

/** @param {number} status */
const openaiError = (status) => ({ error: { message: `fake image upstream error ${status}`, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: String(status) } });
/** @param {number} status */
const dashscopeError = (status) => ({ code: status >= 500 ? "InternalError" : "InvalidParameter", message: `fake dashscope error ${status}`, request_id: "fake-req" });
/** @param {number} status */
const googleError = (status) => ({ error: { code: status, message: `fake gemini error ${status}`, status: status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT" } });

/** @param {import("node:http").ServerResponse} res @param {unknown} body @param {number} [status] */
function send(res, body, status = 200) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** @param {any} body */
const promptOf = (body) => (body && typeof body.prompt === "string" ? body.prompt : "");

/** @type {import("./server.mjs").FakeRoute[]} */
export const imageRoutes = [
  {
    name: "openai images generations",
    // `openai-<anything>`: a regional host of OpenAI's (a provider key's base URL in the region tests).
    match: (req) => req.method === "POST" && (req.provider === "openai" || req.provider.startsWith("openai-")) && req.path === "/images/generations",
    handle(req, res) {
      const body = req.body ?? {};
      const d = parseDirectives(promptOf(body), req.provider);
      if (failEarly(d, res, openaiError)) return;
      if (req.headers.authorization !== "Bearer test-operator-key-openai" && !String(req.headers.authorization ?? "").startsWith("Bearer byok-")) {
        return send(res, openaiError(401), 401);
      }
      if (typeof body.prompt !== "string" || typeof body.model !== "string") return send(res, openaiError(400), 400);
      if ("response_format" in body && String(body.model).startsWith("gpt-image")) {
        return send(res, { error: { message: "Unknown parameter: 'response_format'.", type: "invalid_request_error", param: "response_format", code: "unknown_parameter" } }, 400);
      }
      const n = Number(body.n ?? 1);
      const words = body.prompt.split(/\s+/).filter(Boolean).length;
      send(res, {
        created: Math.floor(Date.now() / 1000),
        data: Array.from({ length: n }, () => ({ b64_json: TINY_PNG_BASE64 })),
        background: "opaque",
        output_format: "png",
        size: body.size ?? "1024x1024",
        quality: "medium",
        usage: { input_tokens: words, input_tokens_details: { text_tokens: words, image_tokens: 0 }, output_tokens: 1056 * n, total_tokens: words + 1056 * n },
      });
    },
  },
  {
    name: "dashscope multimodal generation (qwen-image)",
    match: (req) => req.method === "POST" && req.provider === "alibaba" && req.path === "/api/v1/services/aigc/multimodal-generation/generation",
    handle(req, res) {
      const body = req.body ?? {};
      const text = body?.input?.messages?.[0]?.content?.find?.((/** @type {any} */ p) => typeof p?.text === "string")?.text ?? "";
      const d = parseDirectives(text, req.provider);
      if (failEarly(d, res, dashscopeError)) return;
      if (req.headers.authorization !== "Bearer test-operator-key-alibaba" && !String(req.headers.authorization ?? "").startsWith("Bearer byok-")) {
        return send(res, { code: "InvalidApiKey", message: "Invalid API-key provided.", request_id: "fake-req" }, 401);
      }
      const size = String(body?.parameters?.size ?? "");
      if (!text || !/^\d+\*\d+$/.test(size)) return send(res, dashscopeError(400), 400);
      const [width, height] = size.split("*").map(Number);
      const n = Number(body?.parameters?.n ?? 1);
      const host = req.headers.host ?? "127.0.0.1";
      send(res, {
        output: {
          choices: Array.from({ length: n }, (_, i) => ({
            finish_reason: "stop",
            message: { role: "assistant", content: [{ image: typeof d.get("image_url") === "string" ? String(d.get("image_url")) : `http://${host}/alibaba/__images/result-${i}.png?Expires=9999999999&Signature=fake` }] },
          })),
          task_metric: { TOTAL: n, FAILED: 0, SUCCEEDED: n },
        },
        usage: { width, height, image_count: n },
        request_id: "fake-dashscope-request",
      });
    },
  },
  {
    name: "dashscope result image download",
    match: (req) => req.method === "GET" && req.provider === "alibaba" && req.path.startsWith("/__images/"),
    handle(_req, res) {
      const png = Buffer.from(TINY_PNG_BASE64, "base64");
      res.writeHead(200, { "content-type": "image/png", "content-length": String(png.length) });
      res.end(png);
    },
  },
  {
    name: "dashscope result link redirecting to an internal address",
    match: (req) => req.method === "GET" && req.provider === "alibaba" && req.path === "/__redirect",
    handle(req, res) {
      res.writeHead(302, { location: `http://${req.headers.host}/internal/secret`, "content-type": "text/plain" });
      res.end("moved");
    },
  },
  {
    name: "gemini generateContent image output",
    match: (req) =>
      req.method === "POST" &&
      req.provider === "google-ai-studio" &&
      /^\/v1beta\/models\/[^/:]+:generateContent$/.test(req.path) &&
      Array.isArray(req.body?.generationConfig?.responseModalities) &&
      req.body.generationConfig.responseModalities.includes("IMAGE") &&
      !req.body.generationConfig.responseModalities.includes("TEXT"),
    handle(req, res) {
      const body = req.body ?? {};
      const text = (body.contents ?? []).flatMap((/** @type {any} */ c) => c?.parts ?? []).map((/** @type {any} */ p) => p?.text ?? "").join(" ");
      const d = parseDirectives(text, req.provider);
      if (failEarly(d, res, googleError)) return;
      if (req.headers["x-goog-api-key"] !== "test-operator-key-google-ai-studio" && !String(req.headers["x-goog-api-key"] ?? "").startsWith("byok-")) {
        return send(res, googleError(403), 403);
      }
      const aspect = body.generationConfig?.imageConfig?.aspectRatio ?? "1:1";
      send(res, {
        candidates: [
          {
            content: { role: "model", parts: [{ text: `aspect ${aspect}` }, { inlineData: { mimeType: "image/png", data: TINY_PNG_BASE64 } }] },
            finishReason: "STOP",
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: text.split(/\s+/).filter(Boolean).length, candidatesTokenCount: 1290, totalTokenCount: 1290 + 5 },
        modelVersion: "gemini-2.5-flash-image",
      });
    },
  },
];

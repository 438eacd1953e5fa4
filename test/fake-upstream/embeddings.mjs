// @ts-check
/**
 * Fake embedding upstreams, shaped like the providers' references:
 * - OpenAI-compatible `POST <base>/embeddings` (`{model, input, dimensions?, encoding_format?}` ->
 *   `{object:"list", data:[{object:"embedding", index, embedding}], model, usage:{prompt_tokens,total_tokens}}`;
 *   `encoding_format: "base64"` returns little-endian float32 base64 as OpenAI does).
 * - Gemini `POST /google-ai-studio/v1beta/models/<m>:batchEmbedContents` (`x-goog-api-key`;
 *   `{requests:[{model, content:{parts:[{text}]}, outputDimensionality?}]}` -> `{embeddings:[{values}]}`, no usage).
 * Vectors are deterministic: `dims` values (default 8) derived from the text's length and index;
 * prompt tokens = whitespace-separated words of all inputs. Directives (`[[fake:status=N]]`, …) in
 * any input apply; `[[fake:redirect]]` answers an OpenAI-compatible request with a 307 to the same
 * path under the prefix `redirected` (which answers normally: the gateway must not follow it).
 */
import { failEarly, parseDirectives, words } from "./fake-common.mjs";

/** @param {string} text @param {number} dims */
const vector = (text, dims) => Array.from({ length: dims }, (_, i) => Math.round(((text.length % 97) / 97 + i / (dims * 10)) * 1e6) / 1e6);

/** @param {number} status */
const openaiError = (status) => ({ error: { message: `fake upstream error ${status}`, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: String(status) } });
/** @param {number} status */
const googleError = (status) => ({ error: { code: status, message: `fake upstream error ${status}`, status: status >= 500 ? "UNAVAILABLE" : "INVALID_ARGUMENT" } });

/** @param {unknown} input @returns {string[]} */
function textsOf(input) {
  if (typeof input === "string") return [input];
  if (!Array.isArray(input)) return [];
  if (input.every((x) => typeof x === "number")) return [input.join(" ")];
  return input.map((x) => (Array.isArray(x) ? x.join(" ") : String(x)));
}

/** @param {number[]} v */
function base64Float32(v) {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString("base64");
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {unknown} body */
function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** @type {import("./server.mjs").FakeRoute[]} */
export const embeddingRoutes = [
  {
    name: "gemini batchEmbedContents",
    match: (req) => req.method === "POST" && req.provider === "google-ai-studio" && req.path.endsWith(":batchEmbedContents"),
    handle(req, res) {
      if (!req.headers["x-goog-api-key"]) return send(res, 401, googleError(401));
      /** @type {Array<{model?: string, content?: {parts?: Array<{text?: string}>}, outputDimensionality?: number}>} */
      const requests = Array.isArray(req.body?.requests) ? req.body.requests : [];
      if (requests.length === 0) return send(res, 400, googleError(400));
      const texts = requests.map((r) => (r.content?.parts ?? []).map((p) => p.text ?? "").join(""));
      if (failEarly(parseDirectives(texts.join(" "), req.provider), res, googleError)) return;
      send(res, 200, { embeddings: requests.map((r, i) => ({ values: vector(texts[i] ?? "", r.outputDimensionality ?? 8) })) });
    },
  },
  {
    name: "openai-compatible embeddings redirected elsewhere",
    match: (req) => req.method === "POST" && req.provider !== "redirected" && req.path.endsWith("/embeddings") && parseDirectives(textsOf(req.body?.input).join(" "), req.provider).has("redirect"),
    handle(req, res) {
      res.writeHead(307, { location: `http://${req.headers.host}/redirected${req.path}`, "content-type": "text/plain" });
      res.end("moved");
    },
  },
  {
    name: "openai-compatible embeddings",
    match: (req) => req.method === "POST" && req.path.endsWith("/embeddings"),
    handle(req, res) {
      if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ""))) return send(res, 401, openaiError(401));
      const texts = textsOf(req.body?.input);
      if (texts.length === 0) return send(res, 400, { error: { message: "'input' is a required property", type: "invalid_request_error", param: "input", code: null } });
      if (failEarly(parseDirectives(texts.join(" "), req.provider), res, openaiError)) return;
      const dims = typeof req.body.dimensions === "number" ? req.body.dimensions : 8;
      const b64 = req.body.encoding_format === "base64";
      const tokens = texts.reduce((n, t) => n + words(t), 0);
      send(res, 200, {
        object: "list",
        data: texts.map((t, index) => ({ object: "embedding", index, embedding: b64 ? base64Float32(vector(t, dims)) : vector(t, dims) })),
        model: String(req.body.model ?? ""),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    },
  },
];

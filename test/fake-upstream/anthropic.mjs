// @ts-check
/**
 * Fake Anthropic Messages API: POST /anthropic/v1/messages (x-api-key + anthropic-version
 * required) and POST /anthropic/v1/messages/count_tokens (`{input_tokens}`, the same prompt count
 * the messages endpoint reports). Non-streamed `message` objects and the SSE event sequence message_start ->
 * content_block_start/delta/stop -> message_delta -> message_stop, as in Anthropic's reference.
 *
 * Extended thinking is checked like the real API: the `thinking` blocks it issues carry a
 * signature it can verify (an HMAC of the thinking text under a fixed test secret;
 * `redacted_thinking` data, issued with `[[fake:redacted_thinking]]`, carries one too), a thinking
 * block sent back with any other signature is refused with a 400, and with `thinking` enabled the
 * final assistant turn, when it used tools, must start with a thinking or redacted_thinking block.
 */
import { createHmac } from "node:crypto";
import { failEarly, parseDirectives, pieces, plan, streamWriter, words } from "./fake-common.mjs";

let seq = 0;

/** @param {unknown} content @returns {string} */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((/** @type {any} */ b) => {
      if (!b || typeof b !== "object") return "";
      if (b.type === "text" && typeof b.text === "string") return b.text;
      if (b.type === "tool_result") return textOf(b.content);
      return "";
    })
    .join(" ");
}

/** @param {unknown} content */
const hasText = (content) =>
  typeof content === "string" || (Array.isArray(content) && content.some((b) => b && typeof b === "object" && b.type === "text"));

/** @param {number} status */
function errorBody(status) {
  const type = status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status === 401 ? "authentication_error" : status >= 500 ? "api_error" : "invalid_request_error";
  return { type: "error", error: { type, message: `fake upstream error ${status}` } };
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {string} type @param {string} message */
function reject(res, status, type, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

const THINKING_SECRET = "switchboard-fake-thinking-secret";
const hmac = (/** @type {string} */ text) => createHmac("sha256", THINKING_SECRET).update(text).digest("base64url");
/** The signature the fake issues for a thinking text. @param {string} text */
export const signThinking = (text) => `fake-thinking-${hmac(`thinking:${text}`)}`;
/** Opaque `redacted_thinking` data the fake can verify (Bedrock sends its bytes as `redactedContent`). @param {string} id */
export const redactedData = (id) => `${id}.${hmac(`redacted:${id}`)}`;
/** @param {unknown} data */
export function redactedValid(data) {
  if (typeof data !== "string") return false;
  const dot = data.lastIndexOf(".");
  return dot > 0 && redactedData(data.slice(0, dot)) === data;
}

/**
 * The 400 message the real API gives for this history, or null.
 * @param {any[]} messages @param {boolean} thinkingEnabled
 */
function thinkingError(messages, thinkingEnabled) {
  for (const [i, m] of messages.entries()) {
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const [j, b] of m.content.entries()) {
      if (b?.type === "thinking" && (typeof b.thinking !== "string" || b.signature !== signThinking(b.thinking))) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (b?.type === "redacted_thinking" && !redactedValid(b.data)) return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
    }
  }
  if (!thinkingEnabled) return null;
  const i = messages.map((m) => m?.role).lastIndexOf("assistant");
  const last = messages[i];
  const blocks = Array.isArray(last?.content) ? last.content : [{ type: "text" }];
  if (i < 0 || !blocks.some((/** @type {any} */ b) => b?.type === "tool_use")) return null;
  const first = blocks[0]?.type;
  if (first === "thinking" || first === "redacted_thinking") return null;
  return (
    `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message ` +
    "must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. " +
    "To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
  );
}

/** Claude models with structured outputs (`output_config.format`): 4.5 and newer. */
export const STRUCTURED_OUTPUT_MODEL = /claude-(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])(?:\D|$)/;

/**
 * The 400 the real API gives for an `output_config.format`, or null: a model without the feature,
 * a format other than json_schema, an object schema that does not forbid additional properties.
 * @param {string} model @param {any} format
 */
export function structuredOutputError(model, format) {
  if (!STRUCTURED_OUTPUT_MODEL.test(model)) return `'${model}' does not support output format.`;
  if (format?.type !== "json_schema" || !format.schema || typeof format.schema !== "object") return "output_config.format: Input should be a valid json_schema format";
  if (format.schema.type === "object" && format.schema.additionalProperties !== false) return "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false";
  return null;
}

const VERTEX_CLAUDE = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;
const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

const STOP = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" };

/** Fields `count_tokens` takes; anything else is refused as the real API does ("Extra inputs are not permitted"). */
const COUNT_FIELDS = new Set(["model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers"]);

/** @type {import("./server.mjs").FakeRoute[]} */
export const anthropicRoutes = [
  {
    // The count is the prompt tokens the fake's /v1/messages reports for the same request.
    name: "anthropic count_tokens",
    match: (req) => req.method === "POST" && req.provider === "anthropic" && req.path === "/v1/messages/count_tokens",
    handle(req, res) {
      if (!req.headers["x-api-key"]) return reject(res, 401, "authentication_error", "x-api-key header is required");
      if (!req.headers["anthropic-version"]) return reject(res, 400, "invalid_request_error", "anthropic-version header is required");
      const body = req.body;
      if (!body || typeof body.model !== "string") return reject(res, 400, "invalid_request_error", "model: Field required");
      if (!Array.isArray(body.messages)) return reject(res, 400, "invalid_request_error", "messages: Field required");
      const extra = Object.keys(body).find((k) => !COUNT_FIELDS.has(k));
      if (extra) return reject(res, 400, "invalid_request_error", `${extra}: Extra inputs are not permitted`);
      const lastUser = [...body.messages].reverse().find((m) => m && m.role === "user" && hasText(m.content));
      const d = parseDirectives(textOf(lastUser?.content), req.provider);
      if (failEarly(d, res, errorBody)) return;
      const system = typeof body.system === "string" ? body.system : textOf(body.system);
      const allText = [system, ...body.messages.map((/** @type {any} */ m) => textOf(m?.content))].join(" ");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: words(allText) + 3 }));
    },
  },
  {
    name: "anthropic messages",
    match: (req) => req.method === "POST" && req.provider === "anthropic" && req.path === "/v1/messages",
    async handle(req, res) {
      if (!req.headers["x-api-key"]) return reject(res, 401, "authentication_error", "x-api-key header is required");
      if (!req.headers["anthropic-version"]) return reject(res, 400, "invalid_request_error", "anthropic-version header is required");
      return serveMessages(req, res, String(req.body?.model ?? ""));
    },
  },
  {
    // Claude on Vertex AI: the Messages body without `model` (it is in the path) and with
    // `anthropic_version` in the body; `:streamRawPredict` streams, `:rawPredict` does not.
    name: "vertex claude rawPredict",
    match: (req) => req.method === "POST" && req.provider === "google-vertex" && VERTEX_CLAUDE.test(req.path),
    async handle(req, res) {
      const m = VERTEX_CLAUDE.exec(req.path);
      if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ""))) return reject(res, 401, "authentication_error", "Request had invalid authentication credentials.");
      if (req.body?.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return reject(res, 400, "invalid_request_error", `anthropic_version: must be "${VERTEX_ANTHROPIC_VERSION}"`);
      if ((m?.[2] === "streamRawPredict") !== (req.body?.stream === true)) return reject(res, 400, "invalid_request_error", "stream must be true on streamRawPredict and absent on rawPredict");
      return serveMessages(req, res, decodeURIComponent(m?.[1] ?? ""));
    },
  },
];

/**
 * Answers a Messages request (Anthropic's API and Vertex's rawPredict) once its auth was checked.
 * @param {import("./server.mjs").FakeRequest} req @param {import("node:http").ServerResponse} res @param {string} model
 */
async function serveMessages(req, res, model) {
  const body = req.body;
  if (!body || !Array.isArray(body.messages)) return reject(res, 400, "invalid_request_error", "messages: Field required");
  if (typeof body.max_tokens !== "number") return reject(res, 400, "invalid_request_error", "max_tokens: Field required");
  /** @type {any[]} */
  const messages = body.messages;
  for (let i = 1; i < messages.length; i++) {
    if (messages[i].role === messages[i - 1].role) return reject(res, 400, "invalid_request_error", "messages: roles must alternate between \"user\" and \"assistant\"");
  }
  if (body.thinking?.type === "enabled" && (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool")) {
    return reject(res, 400, "invalid_request_error", "Thinking may not be enabled when tool_choice forces tool use.");
  }
  const refused = thinkingError(messages, body.thinking?.type === "enabled");
  if (refused) return reject(res, 400, "invalid_request_error", refused);
  const format = body.output_config?.format;
  const formatError = format === undefined ? null : structuredOutputError(model, format);
  if (formatError) return reject(res, 400, "invalid_request_error", formatError);
  const lastUser = [...messages].reverse().find((m) => m && m.role === "user" && hasText(m.content));
  const d = parseDirectives(textOf(lastUser?.content), req.provider);
  if (failEarly(d, res, errorBody)) return;
  const last = messages[messages.length - 1];
  const lastResult = Array.isArray(last?.content) ? last.content.find((/** @type {any} */ b) => b && b.type === "tool_result") : undefined;
  const system = typeof body.system === "string" ? body.system : textOf(body.system);
  const p = plan({
    provider: req.provider,
    model,
    directives: d,
    allText: [system, ...messages.map((m) => textOf(m?.content))].join(" "),
    tools: Array.isArray(body.tools) ? body.tools.map((/** @type {any} */ t) => ({ name: t.name, parameters: t.input_schema })) : [],
    toolResult: lastResult ? textOf(lastResult.content) : undefined,
    maxTokens: body.max_tokens,
    toolChoice: body.tool_choice?.type === "tool" ? { name: body.tool_choice.name } : body.tool_choice?.type === "any" ? { any: true } : undefined,
    jsonSchema: format?.schema,
  });
  const read = p.usage.cached;
  const w5m = p.usage.cacheWrite5m;
  const w1h = p.usage.cacheWrite1h;
  const usage = {
    input_tokens: Math.max(0, p.usage.prompt - read - w5m - w1h),
    cache_creation_input_tokens: w5m + w1h,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: w5m, ephemeral_1h_input_tokens: w1h },
    output_tokens: p.usage.completion,
    service_tier: "standard",
  };
  const id = `msg_fake_${++seq}`;
  const stopReason = STOP[p.finish];
  /** @type {any[]} */
  const content = [];
  if (d.has("redacted_thinking")) content.push({ type: "redacted_thinking", data: redactedData(`fake-redacted-${seq}`) });
  if (p.reasoning) content.push({ type: "thinking", thinking: p.reasoning, signature: signThinking(p.reasoning) });
  if (p.text) content.push({ type: "text", text: p.text });
  p.toolCalls.forEach((t, i) => content.push({ type: "tool_use", id: `toolu_fake_${i}`, name: t.name, input: t.args }));

  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json", "request-id": `req_fake_${seq}` });
    if (d.has("malformed")) return void res.end('{"id":"msg_broken","content":[');
    res.end(JSON.stringify({ id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }

  /** @param {string} event @param {unknown} data */
  const sse = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  /** @type {string[]} */
  const frames = [
    sse("message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }),
    sse("ping", { type: "ping" }),
  ];
  content.forEach((block, index) => {
    if (block.type === "thinking") {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }));
      for (const t of pieces(block.thinking)) frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: t } }));
      frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } }));
    } else if (block.type === "redacted_thinking") {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: block }));
    } else if (block.type === "text") {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      for (const t of pieces(block.text, d.has("huge") ? 50 : 1)) frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: t } }));
    } else {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }));
      const json = JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } }));
      frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(0, half) } }));
      frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(half) } }));
    }
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });
  if (d.has("error_midstream")) {
    frames.push(sse("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
  } else if (d.has("malformed")) {
    frames.push("event: content_block_delta\ndata: {not json\n\n");
  } else {
    frames.push(sse("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: p.usage.completion } }));
    if (!d.has("no_done")) frames.push(sse("message_stop", { type: "message_stop" }));
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const w = streamWriter(d, res, frames.length);
  for (const f of frames) if (!(await w.write(f))) return;
  w.end();
}

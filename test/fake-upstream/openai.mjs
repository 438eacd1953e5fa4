// @ts-check
/**
 * Fake OpenAI-compatible Chat Completions upstream: every provider prefix not served by another
 * module (openai, groq, together-ai, mistral, ..., custom providers), plus Azure OpenAI's
 * `/azure/openai/deployments/<deployment>/chat/completions?api-version=...`.
 * Payload shapes follow OpenAI's API reference (chat.completion / chat.completion.chunk).
 */
import { TINY_PNG_BASE64, failEarly, num, parseDirectives, pieces, plan, sleep, streamWriter } from "./fake-common.mjs";

/** Provider prefixes that speak another wire format (their own modules). */
const OTHER_FORMATS = new Set(["anthropic", "google-ai-studio", "google-vertex", "aws-bedrock"]);

let seq = 0;

/** @param {unknown} content */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p && typeof p === "object" && p.type === "text" && typeof p.text === "string" ? p.text : "")).join(" ");
}

/** @param {number} status */
function errorBody(status) {
  const type = status === 429 ? "rate_limit_exceeded" : status === 401 ? "invalid_request_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message: `fake upstream error ${status}`, type, param: null, code: String(status) } };
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {string} message */
function reject(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }));
}

/** @type {import("./server.mjs").FakeRoute[]} */
export const openaiRoutes = [
  {
    name: "openai-compatible chat completions",
    match: (req) => req.method === "POST" && req.path.endsWith("/chat/completions") && !OTHER_FORMATS.has(req.provider),
    async handle(req, res) {
      const azure = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(req.path);
      if (azure) {
        if (!req.headers["api-key"]) return reject(res, 401, "Access denied due to missing subscription key.");
        if (!req.query.get("api-version")) return reject(res, 404, "Resource not found");
      } else if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ""))) {
        return reject(res, 401, "You didn't provide an API key.");
      }
      const body = req.body;
      if (!body || !Array.isArray(body.messages)) return reject(res, 400, "'messages' is a required property");
      const model = azure ? decodeURIComponent(azure[1] ?? "") : String(body.model ?? "");
      /** @type {any[]} */
      const messages = body.messages;
      const lastUser = [...messages].reverse().find((m) => m && m.role === "user");
      const d = parseDirectives(textOf(lastUser?.content), req.provider);
      if (failEarly(d, res, errorBody)) return;
      // A slow but live provider: nothing at all (not even headers) for `delay` ms, then the answer.
      if (d.has("delay")) await sleep(num(d, "delay", 0));
      const last = messages[messages.length - 1];
      const tools = Array.isArray(body.tools) ? body.tools.map((/** @type {any} */ t) => ({ name: t.type === "custom" ? t.custom?.name : t.function?.name, parameters: t.function?.parameters })) : [];
      // A `custom` tool's call carries free-form input (`custom.input`), not JSON arguments.
      const customNames = new Set(Array.isArray(body.tools) ? body.tools.filter((/** @type {any} */ t) => t.type === "custom").map((/** @type {any} */ t) => t.custom?.name) : []);
      const p = plan({
        provider: req.provider,
        model,
        directives: d,
        allText: messages.map((m) => textOf(m?.content)).join(" "),
        tools,
        toolResult: last?.role === "tool" ? textOf(last.content) : undefined,
      });
      const reasoningField = d.get("reasoning") === "reasoning" ? "reasoning" : "reasoning_content";
      const rawFinish = d.get("finish");
      const finish = typeof rawFinish === "string" ? rawFinish : p.finish;
      const id = `chatcmpl-fake-${++seq}`;
      const created = 1700000000;
      const toolCalls = p.toolCalls.map((t, i) => ({ id: `call_fake_${i}`, type: "function", function: { name: t.name, arguments: JSON.stringify(t.args) } }));
      /** @param {{ id: string, function: { name: string, arguments: string } }} tc */
      const customInput = (tc) => `SELECT count(*) FROM ${tc.function.name}`;
      /** @param {{ id: string, function: { name: string, arguments: string } }} tc */
      const wireCall = (tc) => (customNames.has(tc.function.name) ? { id: tc.id, type: "custom", custom: { name: tc.function.name, input: customInput(tc) } } : tc);
      const image = { type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG_BASE64}` } };
      const usage = {
        prompt_tokens: p.usage.prompt,
        completion_tokens: p.usage.completion,
        total_tokens: p.usage.prompt + p.usage.completion,
        prompt_tokens_details: { cached_tokens: p.usage.cached, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: p.usage.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0, ...(p.image ? { image_tokens: p.usage.image } : {}) },
      };
      const n = typeof body.n === "number" && body.n > 1 ? Math.min(body.n, 8) : 1;

      if (!body.stream) {
        if (d.has("malformed")) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end('{"id": "chatcmpl-broken", "choices": [');
          return;
        }
        /** @type {Record<string, unknown>} */
        const message = { role: "assistant", content: p.text || null, refusal: null };
        if (p.reasoning) message[reasoningField] = p.reasoning;
        if (toolCalls.length) message.tool_calls = toolCalls.map(wireCall);
        if (p.image) message.images = [image];
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id, object: "chat.completion", created, model, system_fingerprint: "fp_fake",
          choices: Array.from({ length: n }, (_, index) => ({ index, message, logprobs: null, finish_reason: finish })),
          usage,
          service_tier: "default",
        }));
        return;
      }

      const includeUsage = Boolean(body.stream_options?.include_usage);
      /** @param {Record<string, unknown>} delta @param {string | null} finish @param {number} index */
      const chunk = (delta, finish = null, index = 0) =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_fake", choices: [{ index, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) })}\n\n`;
      /** @type {string[]} */
      const frames = [];
      for (let index = 0; index < n; index++) {
        frames.push(chunk({ role: "assistant", content: "", refusal: null }, null, index));
        if (p.reasoning) for (const r of pieces(p.reasoning)) frames.push(chunk({ [reasoningField]: r }, null, index));
        if (p.text) for (const t of pieces(p.text, d.has("huge") ? 50 : 1)) frames.push(chunk({ content: t }, null, index));
        toolCalls.forEach((tc, i) => {
          if (customNames.has(tc.function.name)) {
            const input = customInput(tc);
            const half = Math.ceil(input.length / 2);
            frames.push(chunk({ tool_calls: [{ index: i, id: tc.id, type: "custom", custom: { name: tc.function.name, input: "" } }] }, null, index));
            frames.push(chunk({ tool_calls: [{ index: i, custom: { input: input.slice(0, half) } }] }, null, index));
            frames.push(chunk({ tool_calls: [{ index: i, custom: { input: input.slice(half) } }] }, null, index));
            return;
          }
          frames.push(chunk({ tool_calls: [{ index: i, id: tc.id, type: "function", function: { name: tc.function.name, arguments: "" } }] }, null, index));
          const args = tc.function.arguments;
          const half = Math.ceil(args.length / 2);
          frames.push(chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] }, null, index));
          frames.push(chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }, null, index));
        });
        if (p.image) frames.push(chunk({ images: [image] }, null, index));
        if (d.has("error_midstream")) {
          frames.push(`data: ${JSON.stringify({ error: { message: "fake upstream failed mid-stream", type: "server_error", code: "internal_error" } })}\n\n`);
          break;
        }
        if (d.has("malformed")) {
          frames.push("data: {this is not json\n\n");
          break;
        }
        frames.push(chunk({}, finish, index));
      }
      const failing = d.has("error_midstream") || d.has("malformed");
      if (includeUsage && !failing) {
        frames.push(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_fake", choices: [], usage })}\n\n`);
      }
      if (!d.has("no_done") && !failing) frames.push("data: [DONE]\n\n");

      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const w = streamWriter(d, res, frames.length);
      for (const f of frames) if (!(await w.write(f))) return;
      w.end();
    },
  },
];

// @ts-check
/**
 * Faults the wire-format modules do not cover, for the resilience suites (test/resilience/).
 *
 * `[[fake:reset_after=N]]` on a streamed OpenAI-compatible chat completion: N content chunks
 * (`w1 `, `w2 `, ...) are sent, then the TCP connection is destroyed without a finish chunk or
 * [DONE]: a connection reset after real output reached the client.
 *
 * `[[fake:echo_key]]` on any OpenAI-compatible chat completion: a 401 whose message quotes the
 * credential it received, as some providers do ("Incorrect API key provided: sk-..."). The gateway
 * must not pass it on to its caller or its logs.
 *
 * `[[fake@<provider>:redirect]]` on any OpenAI-compatible chat completion: a 307 to the same path
 * under the provider prefix `redirected`, which answers normally (the gateway must not follow it).
 */
import { parseDirectives, num, sleep } from "./fake-common.mjs";

/** Provider prefixes that speak another wire format. */
const OTHER_FORMATS = new Set(["anthropic", "google-ai-studio", "google-vertex", "aws-bedrock"]);

/** @param {unknown} messages */
function lastUserText(messages) {
  if (!Array.isArray(messages)) return "";
  const last = [...messages].reverse().find((m) => m && m.role === "user");
  const c = last?.content;
  if (typeof c === "string") return c;
  return Array.isArray(c) ? c.map((p) => (p && typeof p.text === "string" ? p.text : "")).join(" ") : "";
}

/** @param {import("./server.mjs").FakeRequest} req */
const directivesOf = (req) => parseDirectives(lastUserText(req.body?.messages), req.provider);

/** @type {import("./server.mjs").FakeRoute[]} */
export const faultRoutes = [
  {
    name: "chat completion redirected elsewhere",
    match: (req) => req.method === "POST" && req.path.endsWith("/chat/completions") && !OTHER_FORMATS.has(req.provider) && directivesOf(req).has("redirect"),
    handle(req, res) {
      res.writeHead(307, { location: `http://${req.headers.host}/redirected${req.path}`, "content-type": "text/plain" });
      res.end("moved");
    },
  },
  {
    name: "chat completion 401 echoing the credential",
    match: (req) => req.method === "POST" && req.path.endsWith("/chat/completions") && !OTHER_FORMATS.has(req.provider) && directivesOf(req).has("echo_key"),
    handle(req, res) {
      const presented = String(req.headers.authorization ?? req.headers["api-key"] ?? "").replace(/^Bearer\s+/i, "");
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${presented}. You can find your API key at https://example.test/keys.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
    },
  },
  {
    name: "streamed chat completion reset after N chunks",
    match: (req) =>
      req.method === "POST" &&
      req.path.endsWith("/chat/completions") &&
      !OTHER_FORMATS.has(req.provider) &&
      Boolean(req.body?.stream) &&
      parseDirectives(lastUserText(req.body?.messages), req.provider).has("reset_after"),
    async handle(req, res) {
      const d = parseDirectives(lastUserText(req.body.messages), req.provider);
      const n = Math.max(1, num(d, "reset_after", 3));
      const id = "chatcmpl-fake-reset";
      const model = String(req.body.model ?? "");
      /** @param {Record<string, unknown>} delta */
      const chunk = (delta) =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1700000000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(chunk({ role: "assistant", content: "" }));
      for (let i = 1; i <= n; i++) {
        res.write(chunk({ content: `w${i} ` }));
        await sleep(5);
      }
      await sleep(20);
      res.socket?.destroy();
    },
  },
];

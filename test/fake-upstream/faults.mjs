// @ts-check
/**
 * Faults the wire-format modules do not cover, for the resilience suites (test/resilience/).
 *
 * `[[fake:reset_after=N]]` on a streamed OpenAI-compatible chat completion: N content chunks
 * (`w1 `, `w2 `, ...) are sent, then the TCP connection is destroyed without a finish chunk or
 * [DONE]: a connection reset after real output reached the client.
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

/** @type {import("./server.mjs").FakeRoute[]} */
export const faultRoutes = [
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

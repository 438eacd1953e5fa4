// @ts-check
/**
 * Fake moderation upstream (`POST <base>/moderations`, OpenAI's Moderations API shape):
 * `{ id, model, results: [{ flagged, categories, category_scores, category_applied_input_types }] }`.
 * One result per input. An input flags when it contains `[[fake:flag=<category>]]` (e.g.
 * `violence`); `[[fake:status=503]]` etc. inject failures as in the other modules. With
 * `[[fake:usage]]` the answer reports `usage.prompt_tokens` (words of the inputs), as an upstream
 * that bills moderation by the token does (the gateway prices it).
 */
import { failEarly, parseDirectives, words } from "./fake-common.mjs";

const CATEGORIES = [
  "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
  "self-harm", "self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors", "violence", "violence/graphic",
];

let seq = 0;

/** @param {number} status */
function errorBody(status) {
  return { error: { message: `fake upstream error ${status}`, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: String(status) } };
}

/** @param {unknown} input @returns {string[]} one text per moderated input */
function textsOf(input) {
  if (typeof input === "string") return [input];
  if (!Array.isArray(input)) return [];
  if (input.every((x) => typeof x === "string")) return /** @type {string[]} */ (input);
  // multimodal parts: one result for the whole list, like OpenAI
  return [input.map((p) => (p && typeof p === "object" && p.type === "text" ? String(p.text ?? "") : "")).join(" ")];
}

/** @param {string} text @param {string} provider */
function resultFor(text, provider) {
  const d = parseDirectives(text, provider);
  const flaggedCategory = typeof d.get("flag") === "string" ? String(d.get("flag")) : null;
  /** @type {Record<string, boolean>} */
  const categories = {};
  /** @type {Record<string, number>} */
  const scores = {};
  /** @type {Record<string, string[]>} */
  const applied = {};
  for (const c of CATEGORIES) {
    categories[c] = c === flaggedCategory;
    scores[c] = c === flaggedCategory ? 0.97 : 0.0001;
    applied[c] = ["text"];
  }
  return { flagged: flaggedCategory !== null, categories, category_scores: scores, category_applied_input_types: applied };
}

/** @type {import("./server.mjs").FakeRoute[]} */
export const moderationRoutes = [
  {
    name: "openai-compatible moderations",
    match: (req) => req.method === "POST" && req.path.endsWith("/moderations"),
    handle(req, res) {
      if (!/^Bearer \S+/.test(String(req.headers.authorization ?? ""))) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "You didn't provide an API key.", type: "invalid_request_error", param: null, code: null } }));
        return;
      }
      const body = req.body;
      const texts = textsOf(body?.input);
      if (texts.length === 0) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "'input' is a required property", type: "invalid_request_error", param: "input", code: null } }));
        return;
      }
      const d = parseDirectives(texts.join(" "), req.provider);
      if (failEarly(d, res, errorBody)) return;
      const tokens = texts.reduce((n, t) => n + words(t), 0);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `modr-fake-${++seq}`,
          model: String(body.model ?? "omni-moderation-latest"),
          results: texts.map((t) => resultFor(t, req.provider)),
          ...(d.has("usage") ? { usage: { prompt_tokens: tokens, total_tokens: tokens } } : {}),
        }),
      );
    },
  },
];

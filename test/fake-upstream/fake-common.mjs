// @ts-check
/**
 * Shared behaviour of the fake upstream providers: directives (`[[fake:...]]`), deterministic
 * replies and token counts, failure injection. See README.md for the directive list.
 */

/** @typedef {Map<string, string | true>} Directives */

/** A 1x1 transparent PNG, returned for `[[fake:image]]`. */
export const TINY_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/**
 * Parses `[[fake:a,b=1]]` and `[[fake@<provider>:...]]` directives. Scoped directives apply only
 * when `provider` (the first path segment of the upstream request) matches; they override
 * unscoped ones.
 * @param {string} text
 * @param {string} provider
 * @returns {Directives}
 */
export function parseDirectives(text, provider) {
  /** @type {Directives} */
  const out = new Map();
  /** @type {Array<[string | undefined, string]>} */
  const found = [];
  for (const m of text.matchAll(/\[\[fake(?:@([A-Za-z0-9._:-]+))?:([^\]]*)\]\]/g)) found.push([m[1], m[2] ?? ""]);
  for (const scoped of [false, true]) {
    for (const [scope, body] of found) {
      if (Boolean(scope) !== scoped || (scope && scope !== provider)) continue;
      for (const item of body.split(",")) {
        const [k, ...v] = item.trim().split("=");
        if (k) out.set(k.trim(), v.length ? v.join("=").trim() : true);
      }
    }
  }
  return out;
}

/** @param {Directives} d @param {string} k @param {number} dflt */
export function num(d, k, dflt) {
  const v = d.get(k);
  const n = typeof v === "string" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : dflt;
}

/** @param {string} s */
export const words = (s) => (s.match(/\S+/g) ?? []).length;

/** Splits text into stream pieces, one word (with its trailing space) each, or `per` words. */
export function pieces(/** @type {string} */ text, per = 1) {
  const w = text.match(/\S+\s*/g) ?? [];
  const out = [];
  for (let i = 0; i < w.length; i += per) out.push(w.slice(i, i + per).join(""));
  return out.length ? out : [text];
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Deterministic arguments for a tool from its JSON schema: strings "test", numbers 1, booleans true.
 * @param {any} schema
 */
export function argsFor(schema) {
  /** @type {Record<string, unknown>} */
  const out = {};
  const props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  for (const [k, p] of Object.entries(props)) {
    const t = p && typeof p === "object" ? /** @type {any} */ (p).type : undefined;
    out[k] = t === "number" || t === "integer" ? 1 : t === "boolean" ? true : t === "array" ? [] : t === "object" ? {} : "test";
  }
  return out;
}

/**
 * @typedef {object} Plan
 * @property {string} text          reply text ("" when the reply is only tool calls)
 * @property {string} reasoning     reasoning text ("" without `reasoning`)
 * @property {Array<{ name: string, args: Record<string, unknown> }>} toolCalls
 * @property {boolean} image
 * @property {"stop" | "length" | "tool_calls"} finish  OpenAI semantics; modules map it
 * @property {{ prompt: number, completion: number, reasoning: number, cached: number, cacheWrite5m: number, cacheWrite1h: number, image: number }} usage
 */

/**
 * What the fake model answers, from the request as a whole.
 * `maxTokens` is the output cap the request sent (Anthropic `max_tokens`, Bedrock
 * `inferenceConfig.maxTokens`): with `think_max` the model thinks until it hits it, as a real
 * model with extended thinking may, and bills exactly that many output tokens.
 * `toolChoice` is the request's forcing choice, as the real models obey it: `{ name }` calls that
 * tool, `{ any: true }` calls a tool (the first declared with `tools`, else the last declared, so a
 * test can steer it). `jsonSchema` is a schema the platform constrains the answer to (Anthropic
 * `output_config.format`, Bedrock `outputConfig.textFormat`): the reply is JSON text built like
 * tool arguments.
 * @param {{ provider: string, model: string, directives: Directives, allText: string, tools: Array<{ name: string, parameters?: unknown }>, toolResult?: string, maxTokens?: number, toolChoice?: { name?: string, any?: boolean }, jsonSchema?: unknown }} input
 * @returns {Plan}
 */
export function plan(input) {
  const { provider, model, directives: d, allText, tools, toolResult } = input;
  if (d.has("think_max") && typeof input.maxTokens === "number") {
    const reasoning = `Thinking about ${model} step by step.`;
    const usage = { prompt: words(allText) + 3, completion: input.maxTokens, reasoning: input.maxTokens, cached: 0, cacheWrite5m: 0, cacheWrite1h: 0, image: 0 };
    return { text: "", reasoning, toolCalls: [], image: false, finish: "length", usage };
  }
  let text = `Hello from ${provider}/${model}`;
  if (d.has("words")) text = Array.from({ length: num(d, "words", 1) }, (_, i) => `w${i + 1}`).join(" ");
  if (d.has("huge")) text = Array.from({ length: num(d, "huge", 10000) || 10000 }, (_, i) => `word${i}`).join(" ");
  if (toolResult !== undefined) text = `Tool result received: ${toolResult}`;
  const reasoning = d.has("reasoning") ? `Thinking about ${model} step by step.` : "";
  /** @type {Plan["toolCalls"]} */
  let toolCalls = [];
  if (toolResult === undefined && (d.has("tools") || d.has("parallel_tools"))) {
    const available = tools.length ? tools : [{ name: "get_weather", parameters: { properties: { location: { type: "string" } } } }];
    const first = /** @type {{ name: string, parameters?: unknown }} */ (available[0]);
    const second = available[1] ?? first;
    const chosen = d.has("parallel_tools") ? [first, second] : [first];
    toolCalls = chosen.map((t) => ({ name: t.name, args: argsFor(t.parameters) }));
    text = "";
  }
  const forced = input.toolChoice?.name ? tools.find((t) => t.name === input.toolChoice?.name) : input.toolChoice?.any ? (d.has("tools") ? tools[0] : tools[tools.length - 1]) : undefined;
  if (forced) {
    toolCalls = [{ name: forced.name, args: argsFor(forced.parameters) }];
    text = "";
  } else if (input.jsonSchema !== undefined && !toolCalls.length) {
    text = JSON.stringify(argsFor(input.jsonSchema));
  }
  const image = d.has("image");
  const prompt = words(allText) + 3;
  const reasoningTokens = words(reasoning);
  const imageTokens = image ? 1290 : 0;
  const completion = words(text) + reasoningTokens + 10 * toolCalls.length + imageTokens;
  const cached = d.has("cached") ? Math.floor(prompt / 2) : 0;
  const cacheWrite5m = d.has("cached") ? Math.floor(prompt / 4) : 0;
  const cacheWrite1h = d.has("cache_write_1h") ? Math.floor(prompt / 4) : 0;
  const finish = toolCalls.length ? "tool_calls" : d.has("length") ? "length" : "stop";
  return { text, reasoning, toolCalls, image, finish, usage: { prompt, completion, reasoning: reasoningTokens, cached, cacheWrite5m, cacheWrite1h, image: imageTokens } };
}

/**
 * Handles the directives that replace the whole answer: reset, hang, status. Returns true when
 * the response was taken care of.
 * @param {Directives} d
 * @param {import("node:http").ServerResponse} res
 * @param {(status: number) => unknown} errorBody  provider-shaped error payload
 */
export function failEarly(d, res, errorBody) {
  if (d.has("reset")) {
    // workerd logs "Uncaught (in promise) ... Network connection lost" for this even when the
    // fetch is awaited and caught: its own promise, not ours (README.md, under the table).
    res.socket?.destroy();
    return true;
  }
  if (d.has("hang")) return true; // never answer; the server closes the socket at shutdown
  if (d.has("status")) {
    const status = num(d, "status", 500);
    /** @type {Record<string, string>} */
    const headers = { "content-type": "application/json" };
    if (d.has("retry_after")) headers["retry-after"] = String(d.get("retry_after"));
    res.writeHead(status, headers);
    res.end(JSON.stringify(errorBody(status)));
    return true;
  }
  return false;
}

/**
 * A writer for streamed answers honouring ttft / drip / truncate / hang_midstream / reset_midstream /
 * stall_after.
 * `write` resolves false once the stream was cut (callers stop producing).
 * @param {Directives} d
 * @param {import("node:http").ServerResponse} res
 * @param {number} total  number of content frames the module will write (for `truncate`)
 */
export function streamWriter(d, res, total) {
  const drip = num(d, "drip", 0);
  const ttft = num(d, "ttft", 0);
  const cutAt = d.has("truncate") ? Math.max(1, Math.floor(total / 2)) : Infinity;
  const stallAt = d.has("stall_after") ? Math.max(1, num(d, "stall_after", 2)) : Infinity;
  let written = 0;
  let cut = false;
  return {
    /** @param {string | Uint8Array} data @returns {Promise<boolean>} */
    async write(data) {
      if (cut) return false;
      if (written > 0 && drip > 0) await sleep(drip);
      if (written === 0 && ttft > 0) await sleep(ttft);
      if (written >= cutAt) {
        cut = true;
        res.end();
        return false;
      }
      if (written === 1 && d.has("reset_midstream")) {
        cut = true;
        res.socket?.destroy();
        return false;
      }
      if ((written === 1 && d.has("hang_midstream")) || written >= stallAt) {
        cut = true;
        return false;
      }
      res.write(data);
      written++;
      return true;
    },
    get cut() {
      return cut;
    },
    end() {
      if (!cut) res.end();
    },
  };
}

// @ts-check
/**
 * Fake AWS Bedrock runtime (Converse API): POST /aws-bedrock/model/<modelId>/converse and
 * /converse-stream (binary application/vnd.amazon.eventstream). Accepts SigV4
 * (`Authorization: AWS4-HMAC-SHA256 Credential=<id>/<date>/<region>/bedrock/aws4_request, ...`
 * plus x-amz-date; the signature itself is not verified) or a Bedrock API key (`Bearer`).
 *
 * Claude's extended thinking is enforced as on Anthropic's API (same signing as `anthropic.mjs`):
 * `reasoningContent.reasoningText` carries a verifiable `signature`, `redactedContent` (issued with
 * `[[fake:redacted_thinking]]`) is base64 of verifiable bytes; a forged one sent back is a
 * ValidationException 400, and with `additionalModelRequestFields.thinking` enabled the final
 * assistant turn, when it used tools, must start with a `reasoningContent` block.
 */
import { redactedData, redactedValid, signThinking, structuredOutputError } from "./anthropic.mjs";
import { eventMessage, exceptionMessage } from "./eventstream.mjs";
import { failEarly, parseDirectives, pieces, plan, streamWriter } from "./fake-common.mjs";

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/** @param {any} content @returns {string} */
const textOf = (content) =>
  Array.isArray(content)
    ? content
        .map((/** @type {any} */ b) => (typeof b?.text === "string" ? b.text : b?.toolResult ? textOf(b.toolResult.content) : ""))
        .join(" ")
    : "";

/** @param {number} status */
function errorBody(status) {
  return { message: `fake upstream error ${status}` };
}

/** @param {import("node:http").ServerResponse} res @param {number} status @param {string} type @param {string} message */
function reject(res, status, type, message) {
  res.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": type });
  res.end(JSON.stringify({ message }));
}

let seq = 0;

/**
 * The ValidationException message Bedrock gives for this history (Claude's error, wrapped), or null.
 * @param {any[]} messages @param {boolean} thinkingEnabled
 */
function thinkingError(messages, thinkingEnabled) {
  const wrap = (/** @type {string} */ m) => `The model returned the following errors: ${m}`;
  for (const [i, m] of messages.entries()) {
    if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const [j, b] of m.content.entries()) {
      const rc = b?.reasoningContent;
      if (!rc) continue;
      if (rc.reasoningText && (typeof rc.reasoningText.text !== "string" || rc.reasoningText.signature !== signThinking(rc.reasoningText.text))) {
        return wrap(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
      if (!rc.reasoningText && !(typeof rc.redactedContent === "string" && redactedValid(Buffer.from(rc.redactedContent, "base64").toString("latin1")))) {
        return wrap(`messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`);
      }
    }
  }
  if (!thinkingEnabled) return null;
  const i = messages.map((m) => m?.role).lastIndexOf("assistant");
  const blocks = Array.isArray(messages[i]?.content) ? messages[i].content : [];
  if (i < 0 || !blocks.some((/** @type {any} */ b) => b?.toolUse)) return null;
  if (blocks[0]?.reasoningContent) return null;
  const found = blocks[0]?.toolUse ? "tool_use" : "text";
  return wrap(
    `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message ` +
      "must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). To avoid this requirement, disable `thinking`.",
  );
}

const STOP = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" };

/** @type {import("./server.mjs").FakeRoute[]} */
export const bedrockRoutes = [
  {
    name: "bedrock converse",
    match: (req) => req.method === "POST" && req.provider === "aws-bedrock" && PATH.test(req.path),
    async handle(req, res) {
      const m = PATH.exec(req.path);
      const model = decodeURIComponent(m?.[1] ?? "");
      const streaming = m?.[2] === "converse-stream";
      const auth = String(req.headers.authorization ?? "");
      const sigv4 = /^AWS4-HMAC-SHA256 Credential=[A-Z0-9]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/.test(auth);
      if (!sigv4 && !/^Bearer \S+/.test(auth)) return reject(res, 403, "UnrecognizedClientException", "The security token included in the request is invalid.");
      if (sigv4 && !req.headers["x-amz-date"]) return reject(res, 403, "IncompleteSignatureException", "x-amz-date is required");
      const body = req.body;
      if (!body || !Array.isArray(body.messages)) return reject(res, 400, "ValidationException", "messages is required");
      /** @type {any[]} */
      const messages = body.messages;
      for (let i = 1; i < messages.length; i++) {
        if (messages[i].role === messages[i - 1].role) return reject(res, 400, "ValidationException", "A conversation must alternate between user and assistant roles.");
      }
      const refused = thinkingError(messages, body.additionalModelRequestFields?.thinking?.type === "enabled");
      if (refused) return reject(res, 400, "ValidationException", refused);
      // outputConfig.textFormat: the schema travels as a JSON string; Claude applies its own rules to it.
      const textFormat = body.outputConfig?.textFormat;
      /** @type {unknown} */
      let jsonSchema;
      if (textFormat !== undefined) {
        const raw = textFormat?.structure?.jsonSchema?.schema;
        if (textFormat?.type !== "json_schema" || typeof raw !== "string") return reject(res, 400, "ValidationException", "outputConfig.textFormat: a json_schema structure with the schema as a JSON string is required");
        try {
          jsonSchema = JSON.parse(raw);
        } catch {
          return reject(res, 400, "ValidationException", "outputConfig.textFormat.structure.jsonSchema.schema is not valid JSON");
        }
        const claudeError = /anthropic\.claude/.test(model) ? structuredOutputError(model, { type: "json_schema", schema: jsonSchema }) : null;
        if (claudeError) return reject(res, 400, "ValidationException", `The model returned the following errors: ${claudeError}`);
      }
      const choice = body.toolConfig?.toolChoice;
      const lastUser = [...messages].reverse().find((x) => x?.role === "user" && Array.isArray(x.content) && x.content.some((/** @type {any} */ b) => typeof b?.text === "string"));
      const d = parseDirectives(textOf(lastUser?.content), req.provider);
      if (failEarly(d, res, errorBody)) return;
      const last = messages[messages.length - 1];
      const tr = Array.isArray(last?.content) ? last.content.find((/** @type {any} */ b) => b?.toolResult)?.toolResult : undefined;
      const toolResult = tr ? tr.content.map((/** @type {any} */ c) => (typeof c.text === "string" ? c.text : JSON.stringify(c.json))).join(" ") : undefined;
      const p = plan({
        provider: req.provider,
        model,
        directives: d,
        allText: [textOf(body.system), ...messages.map((x) => textOf(x?.content))].join(" "),
        tools: (body.toolConfig?.tools ?? []).map((/** @type {any} */ t) => ({ name: t.toolSpec?.name, parameters: t.toolSpec?.inputSchema?.json })),
        toolResult,
        maxTokens: typeof body.inferenceConfig?.maxTokens === "number" ? body.inferenceConfig.maxTokens : undefined,
        toolChoice: choice?.tool ? { name: choice.tool.name } : choice?.any ? { any: true } : undefined,
        jsonSchema,
      });
      const usage = {
        inputTokens: Math.max(0, p.usage.prompt - p.usage.cached - p.usage.cacheWrite5m),
        outputTokens: p.usage.completion,
        totalTokens: p.usage.prompt + p.usage.completion,
        ...(p.usage.cached || p.usage.cacheWrite5m ? { cacheReadInputTokens: p.usage.cached, cacheWriteInputTokens: p.usage.cacheWrite5m } : {}),
      };
      const stopReason = STOP[p.finish];
      /** @type {any[]} */
      const content = [];
      seq += 1;
      if (d.has("redacted_thinking")) content.push({ reasoningContent: { redactedContent: Buffer.from(redactedData(`fake-redacted-${seq}`), "latin1").toString("base64") } });
      if (p.reasoning) content.push({ reasoningContent: { reasoningText: { text: p.reasoning, signature: signThinking(p.reasoning) } } });
      if (p.text) content.push({ text: p.text });
      p.toolCalls.forEach((t, i) => content.push({ toolUse: { toolUseId: `tooluse_fake_${i}`, name: t.name, input: t.args } }));

      if (!streaming) {
        res.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": "fake-request-id" });
        if (d.has("malformed")) return void res.end('{"output": {"message": ');
        res.end(JSON.stringify({ output: { message: { role: "assistant", content } }, stopReason, usage, metrics: { latencyMs: 1 } }));
        return;
      }
      /** @type {Buffer[]} */
      const frames = [eventMessage("messageStart", { role: "assistant", p: "abc" })];
      content.forEach((block, contentBlockIndex) => {
        if (block.reasoningContent?.redactedContent) {
          // In two pieces, each the base64 of its own bytes: clients must join the bytes, not the strings.
          const bytes = Buffer.from(block.reasoningContent.redactedContent, "base64");
          for (const part of [bytes.subarray(0, 5), bytes.subarray(5)]) {
            frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { redactedContent: part.toString("base64") } } }));
          }
        } else if (block.reasoningContent) {
          for (const t of pieces(block.reasoningContent.reasoningText.text)) frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { text: t } }, p: "ab" }));
          frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { signature: block.reasoningContent.reasoningText.signature } } }));
        } else if (block.text) {
          for (const t of pieces(block.text, d.has("huge") ? 50 : 1)) frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { text: t }, p: "abcdef" }));
        } else {
          frames.push(eventMessage("contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name } } }));
          const json = JSON.stringify(block.toolUse.input);
          const half = Math.ceil(json.length / 2);
          frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: json.slice(0, half) } } }));
          frames.push(eventMessage("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: json.slice(half) } } }));
        }
        frames.push(eventMessage("contentBlockStop", { contentBlockIndex }));
      });
      if (d.has("error_midstream")) frames.push(exceptionMessage("modelStreamErrorException", "fake upstream failed mid-stream"));
      else if (d.has("malformed")) {
        const bad = eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } });
        bad.writeUInt32BE((bad.readUInt32BE(bad.length - 4) ^ 1) >>> 0, bad.length - 4); // corrupt the message CRC
        frames.push(bad);
      } else {
        frames.push(eventMessage("messageStop", { stopReason }));
        frames.push(eventMessage("metadata", { usage, metrics: { latencyMs: 1 } }));
      }
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "fake-request-id" });
      const w = streamWriter(d, res, frames.length);
      // Split every frame across two writes so clients must reassemble messages.
      for (const f of frames) {
        const cut = Math.floor(f.length / 2);
        if (!(await w.write(f.subarray(0, cut)))) return;
        res.write(f.subarray(cut));
      }
      w.end();
    },
  },
];

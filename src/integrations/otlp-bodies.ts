/**
 * A request's kept prompt and answer as a span event, for projects with `logBodies` only: the
 * GenAI semantic conventions' `gen_ai.client.inference.operation.details` event with
 * `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages` (JSON text of
 * the conventions' message shape: role, parts of type text / tool_call / tool_call_response /
 * uri or blob references, finish_reason). The bodies are the stored ones (src/usage/bodies.ts:
 * secrets removed, personal data masked when the organization asks), each attribute cut at
 * EVENT_VALUE_BYTES so a span stays well inside one queue message.
 */
import type { StoredBodies } from "../usage/bodies";

export const OPERATION_DETAILS_EVENT = "gen_ai.client.inference.operation.details";
/** Characters of JSON text per message attribute of the event. */
export const EVENT_VALUE_BYTES = 16 * 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? null));

/** An OpenAI content value (string or parts) as convention parts; images as a URI reference, never their bytes. */
function contentParts(content: unknown): Json[] {
  if (content === null || content === undefined || content === "") return [];
  if (!Array.isArray(content)) return [{ type: "text", content: str(content) }];
  return content.map((p): Json => {
    if (isObject(p) && p.type === "text") return { type: "text", content: str(p.text) };
    const url = isObject(p) && isObject(p.image_url) ? p.image_url.url : undefined;
    if (typeof url === "string") return url.startsWith("data:") ? { type: "blob", modality: "image", mime_type: /^data:([^;,]+)/.exec(url)?.[1] ?? null } : { type: "uri", modality: "image", uri: url };
    return { type: "text", content: str(p) };
  });
}

function messageOf(m: Json): Json {
  const parts = contentParts(m.content);
  if (typeof m.reasoning === "string" && m.reasoning) parts.unshift({ type: "reasoning", content: m.reasoning });
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls) {
      const fn = isObject(c) && isObject(c.function) ? c.function : {};
      parts.push({ type: "tool_call", id: isObject(c) ? (c.id ?? null) : null, name: fn.name ?? null, arguments: fn.arguments ?? null });
    }
  }
  if (m.role === "tool") return { role: "tool", parts: [{ type: "tool_call_response", id: m.tool_call_id ?? null, response: str(m.content) }] };
  return { role: str(m.role ?? "user"), parts };
}

const cut = (s: string): { text: string; cut: boolean } => (s.length <= EVENT_VALUE_BYTES ? { text: s, cut: false } : { text: s.slice(0, EVENT_VALUE_BYTES), cut: true });

/** The event's attributes (key, string value) from stored bodies; a body of another shape goes in as its JSON text. */
export function operationDetails(b: StoredBodies): { attributes: Array<{ key: string; value: string }>; truncated: boolean } {
  const req = b.requestBody;
  const res = b.responseBody;
  const out: Array<{ key: string; value: string }> = [];
  let truncated = b.truncated !== undefined && (b.truncated.request || b.truncated.response);
  const put = (key: string, value: unknown) => {
    const c = cut(typeof value === "string" ? value : JSON.stringify(value));
    truncated ||= c.cut;
    out.push({ key, value: c.text });
  };
  if (isObject(req) && Array.isArray(req.messages)) {
    const msgs = req.messages.filter(isObject);
    const system = msgs.filter((m) => m.role === "system" || m.role === "developer");
    if (system.length) put("gen_ai.system_instructions", system.flatMap((m) => contentParts(m.content)));
    put("gen_ai.input.messages", msgs.filter((m) => !system.includes(m)).map(messageOf));
  } else {
    put("gen_ai.input.messages", [{ role: "user", parts: [{ type: "text", content: str(req) }] }]);
  }
  if (isObject(res) && Array.isArray(res.choices)) {
    put(
      "gen_ai.output.messages",
      res.choices.filter(isObject).map((c) => ({ ...messageOf(isObject(c.message) ? c.message : {}), role: "assistant", finish_reason: c.finish_reason ?? null })),
    );
  } else {
    put("gen_ai.output.messages", [{ role: "assistant", parts: [{ type: "text", content: str(res) }] }]);
  }
  return { attributes: out, truncated };
}

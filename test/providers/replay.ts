/**
 * Feeds the gateway an exact upstream answer (the fake upstream's replay, test/fake-upstream/replay.mjs)
 * and reads what each front door (`/v1/chat/completions`, `/v1/messages`, `/v1/responses`) makes
 * of it, streamed and not, folded into one comparable shape.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call } from "../helpers/fixtures";

export interface Replay {
  status?: number;
  json?: unknown;
  sse?: Array<{ event?: string; data: unknown }>;
  events?: Array<{ eventType: string; body: unknown }>;
}

let counter = 0;

/** Stores `r` in the fake upstream; returns the directive a prompt carries to get it. */
export async function replay(r: Replay): Promise<string> {
  const id = `r${Date.now().toString(36)}${(counter++).toString(36)}`;
  const res = await fetch(`${env.FAKE_UPSTREAM_URL}/__replay/${id}`, { method: "POST", body: JSON.stringify(r) });
  expect(res.status).toBe(204);
  return `[[replay:${id}]]`;
}

/** Anthropic SSE frames from `[event, data]` pairs (the event name is also the data's `type`). */
export const anthropicSse = (...frames: Array<Record<string, unknown> & { type: string }>): Replay => ({
  sse: frames.map((data) => ({ event: data.type, data })),
});

/** What a caller got, whatever the front door. */
export interface Answer {
  status: number;
  text: string;
  reasoning: string;
  refusal: string;
  tools: Array<{ name: string; arguments: string }>;
  finish: string | null;
  /** The error envelope's message, when the answer ended with one. */
  error: string | null;
  body: string;
}

const empty = (status: number, body: string): Answer => ({ status, text: "", reasoning: "", refusal: "", tools: [], finish: null, error: null, body });

function sseData(raw: string): unknown[] {
  const out: unknown[] = [];
  for (const block of raw.split(/\n\n/)) {
    const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    if (data && data !== "[DONE]") out.push(JSON.parse(data));
  }
  return out;
}

/** The wire fields these readers look at (all three front doors), each optional. */
interface J {
  type?: string;
  index?: number;
  error?: { message?: string } | null;
  message?: string | J;
  choices?: J[];
  delta?: J & { content?: string | null; reasoning?: string; refusal?: string; tool_calls?: J[]; text?: string; thinking?: string; partial_json?: string; stop_reason?: string };
  finish_reason?: string | null;
  function?: { name?: string; arguments?: string };
  content?: string | null | J[];
  content_block?: J & { name?: string; text?: string };
  reasoning?: string;
  refusal?: string;
  tool_calls?: J[];
  text?: string;
  thinking?: string;
  name?: string;
  input?: unknown;
  arguments?: string;
  stop_reason?: string;
  response?: J;
  output?: J[];
  summary?: J[];
  status?: string;
}

/** POST /v1/chat/completions with `directive` in the prompt. */
export async function viaChat(key: string, model: string, directive: string, stream: boolean, extra: Record<string, unknown> = {}): Promise<Answer> {
  const res = await call("/v1/chat/completions", { method: "POST", key, headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream, messages: [{ role: "user", content: `go ${directive}` }], ...extra }) });
  const body = await res.text();
  const a = empty(res.status, body);
  if (!stream) {
    const j = JSON.parse(body) as J;
    if (j.error) return { ...a, error: String(j.error.message) };
    const choice = j.choices?.[0] ?? {};
    const m = (choice.message ?? {}) as J;
    const tools = (m.tool_calls ?? []).map((t) => ({ name: t.function?.name ?? "", arguments: t.function?.arguments ?? "" }));
    return { ...a, text: typeof m.content === "string" ? m.content : "", reasoning: m.reasoning ?? "", refusal: m.refusal ?? "", tools, finish: choice.finish_reason ?? null };
  }
  const tools = new Map<number, { name: string; arguments: string }>();
  for (const c of sseData(body) as J[]) {
    if (c.error) a.error = String(c.error.message);
    for (const ch of c.choices ?? []) {
      const d = ch.delta ?? {};
      a.text += typeof d.content === "string" ? d.content : "";
      a.reasoning += d.reasoning ?? "";
      a.refusal += d.refusal ?? "";
      for (const t of d.tool_calls ?? []) {
        const cur = tools.get(t.index ?? 0) ?? { name: "", arguments: "" };
        cur.name += t.function?.name ?? "";
        cur.arguments += t.function?.arguments ?? "";
        tools.set(t.index ?? 0, cur);
      }
      if (ch.finish_reason) a.finish = ch.finish_reason;
    }
  }
  a.tools = [...tools.values()];
  return a;
}

/** POST /v1/messages; tool inputs as JSON text, stop reasons in Anthropic's words. */
export async function viaMessages(key: string, model: string, directive: string, stream: boolean): Promise<Answer> {
  const res = await call("/v1/messages", { method: "POST", key, headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify({ model, stream, max_tokens: 1000, messages: [{ role: "user", content: `go ${directive}` }] }) });
  const body = await res.text();
  const a = empty(res.status, body);
  const fold = (blocks: J[]) => {
    for (const b of blocks) {
      if (b.type === "text") a.text += b.text ?? "";
      if (b.type === "thinking") a.reasoning += b.thinking ?? "";
      if (b.type === "tool_use") a.tools.push({ name: b.name ?? "", arguments: JSON.stringify(b.input) });
    }
  };
  if (!stream) {
    const j = JSON.parse(body) as J;
    if (j.type === "error") return { ...a, error: String(j.error?.message) };
    fold(Array.isArray(j.content) ? j.content : []);
    return { ...a, finish: j.stop_reason ?? null };
  }
  const partial = new Map<number, { name: string; json: string }>();
  for (const e of sseData(body) as J[]) {
    const i = e.index ?? -1;
    if (e.type === "error") a.error = String(e.error?.message);
    if (e.type === "content_block_start" && e.content_block?.type === "tool_use") partial.set(i, { name: e.content_block.name ?? "", json: "" });
    if (e.type === "content_block_start" && e.content_block?.type === "text") a.text += e.content_block.text ?? "";
    if (e.type === "content_block_delta" && e.delta) {
      if (e.delta.type === "text_delta") a.text += e.delta.text ?? "";
      if (e.delta.type === "thinking_delta") a.reasoning += e.delta.thinking ?? "";
      const open = partial.get(i);
      if (e.delta.type === "input_json_delta" && open) open.json += e.delta.partial_json ?? "";
    }
    if (e.type === "message_delta") a.finish = e.delta?.stop_reason ?? null;
  }
  a.tools = [...partial.values()].map((t) => ({ name: t.name, arguments: JSON.stringify(JSON.parse(t.json || "{}")) }));
  return a;
}

/** POST /v1/responses; the final response object (streamed: `response.completed` or `response.failed`). */
export async function viaResponses(key: string, model: string, directive: string, stream: boolean): Promise<Answer> {
  const res = await call("/v1/responses", { method: "POST", key, headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream, input: `go ${directive}` }) });
  const body = await res.text();
  const a = empty(res.status, body);
  let r: J | undefined;
  if (!stream) {
    const j = JSON.parse(body) as J;
    if (j.error && !j.output) return { ...a, error: String(j.error.message) };
    r = j;
  } else {
    for (const e of sseData(body) as J[]) {
      if (e.type === "error") a.error = String(typeof e.message === "string" ? e.message : e.error?.message);
      if (e.type === "response.completed" || e.type === "response.failed" || e.type === "response.incomplete") r = e.response;
    }
  }
  if (!r) return a;
  if (r.error) a.error = String(r.error.message);
  for (const item of r.output ?? []) {
    if (item.type === "message" && Array.isArray(item.content)) for (const c of item.content) {
      if (c.type === "output_text") a.text += c.text ?? "";
      if (c.type === "refusal") a.refusal += c.refusal ?? "";
    }
    if (item.type === "reasoning") a.reasoning += (item.summary ?? []).map((x) => x.text ?? "").join("");
    if (item.type === "function_call") a.tools.push({ name: item.name ?? "", arguments: item.arguments ?? "" });
  }
  a.finish = r.status ?? null;
  return a;
}

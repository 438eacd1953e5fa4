/**
 * Chat-completion chunks -> the Responses API's typed stream events, each with its
 * `sequence_number`:
 *   response.created, response.in_progress,
 *   per output item: response.output_item.added, then
 *     reasoning: response.reasoning_summary_part.added, response.reasoning_summary_text.delta…,
 *                response.reasoning_summary_text.done, response.reasoning_summary_part.done
 *     message:   response.content_part.added, response.output_text.delta…,
 *                response.output_text.done, response.content_part.done
 *     function:  response.function_call_arguments.delta…, response.function_call_arguments.done
 *     custom:    response.custom_tool_call_input.delta…, response.custom_tool_call_input.done
 *   response.output_item.done,
 *   response.completed (or response.incomplete) with the whole response and usage.
 * A failed stream ends with `error` and `response.failed`. Pure state machine.
 */
import { firstChoice, type ChatChunk, type ChunkEncoder } from "../chat-sse";
import type { ResponsesRequest } from "./request";
import { customToolCallItem, functionCallItem, messageItem, newItemId, outputTextPart, reasoningItem, refusalItem, responseShell, statusOf, usageOf } from "./response";

type Item =
  | { kind: "reasoning"; id: string; text: string }
  | { kind: "message"; id: string; text: string }
  | { kind: "refusal"; id: string; text: string }
  | { kind: "function" | "custom"; id: string; callId: string; name: string; args: string; toolIndex: number };

export class ResponsesStreamEncoder implements ChunkEncoder {
  private seq = 0;
  private open: Item | null = null;
  private readonly done_: unknown[] = [];
  private finish: string | null = null;
  private usage: ChatChunk["usage"] | null = null;
  private failed = false;
  /** The model every response object names: the one that served once the first chunk said so. */
  private model: string;

  constructor(private readonly req: ResponsesRequest, private readonly id: string, private readonly createdAt: number) {
    this.model = req.model;
  }

  private event(type: string, data: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  private shell(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...responseShell(this.req, this.id, this.createdAt, this.model), ...extra };
  }

  start(served?: string): string {
    if (served) this.model = served;
    return this.event("response.created", { response: this.shell() }) + this.event("response.in_progress", { response: this.shell() });
  }

  private get outputIndex(): number {
    return this.done_.length;
  }

  private close(): string {
    const it = this.open;
    if (!it) return "";
    this.open = null;
    const output_index = this.outputIndex;
    let out = "";
    let item: unknown;
    if (it.kind === "reasoning") {
      const part = { type: "summary_text", text: it.text };
      out += this.event("response.reasoning_summary_text.done", { item_id: it.id, output_index, summary_index: 0, text: it.text });
      out += this.event("response.reasoning_summary_part.done", { item_id: it.id, output_index, summary_index: 0, part });
      item = reasoningItem(it.id, it.text);
    } else if (it.kind === "message") {
      const part = outputTextPart(it.text);
      out += this.event("response.output_text.done", { item_id: it.id, output_index, content_index: 0, text: it.text, logprobs: [] });
      out += this.event("response.content_part.done", { item_id: it.id, output_index, content_index: 0, part });
      item = messageItem(it.id, it.text, "completed");
    } else if (it.kind === "refusal") {
      out += this.event("response.refusal.done", { item_id: it.id, output_index, content_index: 0, refusal: it.text });
      out += this.event("response.content_part.done", { item_id: it.id, output_index, content_index: 0, part: { type: "refusal", refusal: it.text } });
      item = refusalItem(it.id, it.text, "completed");
    } else if (it.kind === "custom") {
      out += this.event("response.custom_tool_call_input.done", { item_id: it.id, output_index, input: it.args });
      item = customToolCallItem(it.id, it.callId, it.name, it.args, "completed");
    } else {
      out += this.event("response.function_call_arguments.done", { item_id: it.id, output_index, arguments: it.args });
      item = functionCallItem(it.id, it.callId, it.name, it.args, "completed");
    }
    out += this.event("response.output_item.done", { output_index, item });
    this.done_.push(item);
    return out;
  }

  private begin(it: Item): string {
    let out = this.close();
    this.open = it;
    const output_index = this.outputIndex;
    if (it.kind === "reasoning") {
      out += this.event("response.output_item.added", { output_index, item: { type: "reasoning", id: it.id, summary: [] } });
      out += this.event("response.reasoning_summary_part.added", { item_id: it.id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
    } else if (it.kind === "message") {
      out += this.event("response.output_item.added", { output_index, item: messageItem(it.id, "", "in_progress") });
      out += this.event("response.content_part.added", { item_id: it.id, output_index, content_index: 0, part: outputTextPart("") });
    } else if (it.kind === "refusal") {
      out += this.event("response.output_item.added", { output_index, item: refusalItem(it.id, "", "in_progress") });
      out += this.event("response.content_part.added", { item_id: it.id, output_index, content_index: 0, part: { type: "refusal", refusal: "" } });
    } else if (it.kind === "custom") {
      out += this.event("response.output_item.added", { output_index, item: customToolCallItem(it.id, it.callId, it.name, "", "in_progress") });
    } else {
      out += this.event("response.output_item.added", { output_index, item: functionCallItem(it.id, it.callId, it.name, "", "in_progress") });
    }
    return out;
  }

  chunk(c: ChatChunk): string {
    if (c.usage) this.usage = c.usage;
    const choice = firstChoice(c);
    if (!choice) return "";
    let out = "";
    const d = choice.delta;
    if (d.reasoning) {
      if (this.open?.kind !== "reasoning") out += this.begin({ kind: "reasoning", id: newItemId("rs"), text: "" });
      const it = this.open as Item & { kind: "reasoning" };
      it.text += d.reasoning;
      out += this.event("response.reasoning_summary_text.delta", { item_id: it.id, output_index: this.outputIndex, summary_index: 0, delta: d.reasoning });
    }
    if (d.content) {
      if (this.open?.kind !== "message") out += this.begin({ kind: "message", id: newItemId("msg"), text: "" });
      const it = this.open as Item & { kind: "message" };
      it.text += d.content;
      out += this.event("response.output_text.delta", { item_id: it.id, output_index: this.outputIndex, content_index: 0, delta: d.content, logprobs: [] });
    }
    if (d.refusal) {
      if (this.open?.kind !== "refusal") out += this.begin({ kind: "refusal", id: newItemId("msg"), text: "" });
      const it = this.open as Item & { kind: "refusal" };
      it.text += d.refusal;
      out += this.event("response.refusal.delta", { item_id: it.id, output_index: this.outputIndex, content_index: 0, delta: d.refusal });
    }
    for (const tc of d.tool_calls ?? []) {
      const open = this.open;
      const it =
        (open?.kind === "function" || open?.kind === "custom") && open.toolIndex === tc.index
          ? open
          : tc.type === "custom" || tc.custom
            ? { kind: "custom" as const, id: newItemId("ctc"), callId: tc.id ?? newItemId("call"), name: tc.custom?.name ?? "", args: "", toolIndex: tc.index }
            : { kind: "function" as const, id: newItemId("fc"), callId: tc.id ?? newItemId("call"), name: tc.function?.name ?? "", args: "", toolIndex: tc.index };
      if (it !== open) out += this.begin(it);
      const piece = (it.kind === "custom" ? tc.custom?.input : tc.function?.arguments) ?? "";
      if (piece) {
        it.args += piece;
        out += this.event(it.kind === "custom" ? "response.custom_tool_call_input.delta" : "response.function_call_arguments.delta", { item_id: it.id, output_index: this.outputIndex, delta: piece });
      }
    }
    if (choice.finish) {
      this.finish = choice.finish;
      out += this.close();
    }
    return out;
  }

  keepAlive(): string {
    return ": keep-alive\n\n";
  }

  error(e: { message: string; type: string }): string {
    this.failed = true;
    const out = this.close();
    const error = { code: e.type === "upstream_error" ? "server_error" : e.type, message: e.message };
    return (
      out +
      this.event("error", { code: error.code, message: e.message, param: null }) +
      this.event("response.failed", { response: this.shell({ status: "failed", error, output: this.done_, usage: usageOf(this.usage) }) })
    );
  }

  done(): string {
    if (this.failed) return "";
    const out = this.close();
    const st = statusOf(this.finish);
    const response = this.shell({ ...st, output: this.done_, usage: usageOf(this.usage) });
    return out + this.event(st.status === "completed" ? "response.completed" : "response.incomplete", { response });
  }
}

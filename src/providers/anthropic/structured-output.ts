/**
 * `response_format` (json_schema, json_object) on Claude, for the three places Claude is served
 * (Anthropic Messages, Bedrock Converse, Vertex rawPredict). Two ways:
 *
 * - natively, where the platform constrains the answer to a schema itself (Anthropic's
 *   `output_config.format`, Bedrock Converse's `outputConfig.textFormat`): a `strict` json_schema
 *   on the models that have it (Claude 4.5 and newer); the answer is text, nothing to translate;
 * - otherwise through a forced call of one extra tool whose input schema is the caller's schema
 *   (`{type: "object"}` for json_object). The tool's input becomes the message content as JSON
 *   text, finish_reason `stop`, streamed as content deltas: the caller never sees the tool.
 *
 * The extra tool's name is derived from the request (`outputToolName`), so the adapter that
 * builds the request and the parser that folds the answer agree without state, and a caller's own
 * tool of the same name makes it pick another: it never collides.
 */
import type { ChatRequest, ParsedCompletion, StreamEvent, ToolCall } from "../types";

const OUTPUT_TOOL = "json_output";
const OUTPUT_TOOL_DESCRIPTION = "Answer with this tool: its input is the whole answer, in the requested JSON shape.";

/** The reserved tool name for this request: `json_output`, with `_` added while a caller's tool has it. */
export function outputToolName(req: Pick<ChatRequest, "tools">): string {
  const taken = new Set((req.tools ?? []).map((t) => t.function.name));
  let name = OUTPUT_TOOL;
  while (taken.has(name)) name += "_";
  return name;
}

export type JsonOutputPlan =
  | { kind: "none" }
  | { kind: "native"; name: string; description?: string; schema: Record<string, unknown> }
  | {
      kind: "tool";
      /** The reserved tool. */
      tool: { name: string; description: string; schema: Record<string, unknown> };
      /**
       * `tool`: forced to call it (no caller tools to choose from, or the caller said `none`);
       * `any`: the caller's tools stay callable, and the answer is either one of their calls or
       * the reserved tool's input.
       */
      choice: "tool" | "any";
    };

/** Claude models whose API constrains the answer to a JSON schema itself (4.5 and newer). */
const NATIVE_JSON_MODEL = /claude-(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])(?:\D|$)/;
export const claudeHasNativeJson = (externalId: string): boolean => NATIVE_JSON_MODEL.test(externalId);

/**
 * How a request's `response_format` goes to Claude. `native`: whether this platform and model take
 * a schema natively. A `strict` json_schema goes native there; a non-strict one (which may not
 * meet the native feature's schema rules) and json_object go through the tool. A caller who
 * forces one of their own tools gets that call: the format does not apply to it.
 */
export function jsonOutputPlan(req: ChatRequest, native: boolean): JsonOutputPlan {
  const rf = req.response_format;
  if (!rf || rf.type === "text") return { kind: "none" };
  if (typeof req.tool_choice === "object" && req.tools?.length) return { kind: "none" };
  if (rf.type === "json_schema") {
    const schema = rf.json_schema.schema ?? { type: "object" };
    if (native && rf.json_schema.strict === true) {
      return { kind: "native", name: rf.json_schema.name, schema, ...(rf.json_schema.description ? { description: rf.json_schema.description } : {}) };
    }
    const description = rf.json_schema.description ? `${OUTPUT_TOOL_DESCRIPTION} ${rf.json_schema.description}` : OUTPUT_TOOL_DESCRIPTION;
    return { kind: "tool", tool: { name: outputToolName(req), description, schema }, choice: toolChoiceFor(req) };
  }
  return { kind: "tool", tool: { name: outputToolName(req), description: OUTPUT_TOOL_DESCRIPTION, schema: { type: "object" } }, choice: toolChoiceFor(req) };
}

const toolChoiceFor = (req: ChatRequest): "tool" | "any" => (req.tools?.length && req.tool_choice !== "none" ? "any" : "tool");

/** Whether the plan forces a tool call (Claude then refuses extended thinking). */
export const planForcesTool = (plan: JsonOutputPlan): boolean => plan.kind === "tool";

/** The non-streamed answer with the reserved tool's call folded into the message content. */
export function foldOutputTool(parsed: ParsedCompletion, name: string): ParsedCompletion {
  return {
    ...parsed,
    choices: parsed.choices.map((choice) => {
      const calls = choice.message.tool_calls ?? [];
      const output = calls.find((c) => c.function.name === name);
      if (!output) return choice;
      const rest: ToolCall[] = calls.filter((c) => c !== output);
      const { tool_calls: _dropped, ...message } = choice.message;
      return {
        ...choice,
        message: { ...message, content: output.function.arguments, ...(rest.length ? { tool_calls: rest } : {}) },
        finish_reason: choice.finish_reason === "tool_calls" && !rest.length ? "stop" : choice.finish_reason,
      };
    }),
  };
}

/**
 * The stream with the reserved tool's call turned into content deltas: its argument pieces are the
 * content, the caller's own tool calls keep their order (renumbered without the reserved one), and
 * a `tool_calls` finish with no caller call left becomes `stop`.
 */
export async function* foldOutputToolStream(events: AsyncIterable<StreamEvent>, name: string): AsyncGenerator<StreamEvent> {
  /** upstream tool index -> caller-visible index, or null for the reserved tool */
  const indexes = new Map<number, number | null>();
  let callerCalls = 0;
  for await (const ev of events) {
    if (ev.type === "finish" && ev.finishReason === "tool_calls" && callerCalls === 0) {
      yield { ...ev, finishReason: "stop" };
      continue;
    }
    if (ev.type !== "delta" || !ev.delta.tool_calls) {
      yield ev;
      continue;
    }
    let content = "";
    const kept: NonNullable<typeof ev.delta.tool_calls> = [];
    for (const call of ev.delta.tool_calls) {
      if (!indexes.has(call.index)) indexes.set(call.index, call.function.name === name ? null : callerCalls++);
      const mapped = indexes.get(call.index);
      if (mapped === null || mapped === undefined) content += call.function.arguments ?? "";
      else kept.push({ ...call, index: mapped });
    }
    const { tool_calls: _calls, ...rest } = ev.delta;
    const delta = { ...rest, ...(content ? { content: (rest.content ?? "") + content } : {}), ...(kept.length ? { tool_calls: kept } : {}) };
    if (Object.keys(delta).length) yield { ...ev, delta };
  }
}

/**
 * A Claude adapter's parsed answer, with the reserved tool folded back when the request's plan
 * used one (no request: nothing to fold).
 */
export function withJsonOutput<T>(plan: JsonOutputPlan | undefined, parsed: T, fold: (value: T, name: string) => T): T {
  return plan?.kind === "tool" ? fold(parsed, plan.tool.name) : parsed;
}

/**
 * Tool calls between the gateway's internal shape (`ToolCall`: a custom tool's input carried in
 * `function.arguments`) and OpenAI Chat Completions' wire shape, where a call of a `custom` tool is
 * `{id, type: "custom", custom: {name, input}}` (streamed: `{index, id?, type?, custom: {name?, input?}}`).
 * Used both ways by the OpenAI adapter and to answer callers on /v1/chat/completions. Pure.
 */
import type { ChatRequest, ChunkDelta, ToolCall } from "./types";
import { asRecord, str } from "./json";

type DeltaToolCall = NonNullable<ChunkDelta["tool_calls"]>[number];

/** A whole tool call as OpenAI Chat Completions writes it. */
export function wireToolCall(tc: ToolCall): Record<string, unknown> {
  const { extra_content, ...rest } = tc;
  if (tc.type !== "custom") return { ...rest, ...(extra_content ? { extra_content } : {}) };
  return { id: tc.id, type: "custom", custom: { name: tc.function.name, input: tc.function.arguments } };
}

/**
 * A streamed piece of a tool call as OpenAI Chat Completions writes it; `custom`: the piece belongs
 * to a custom tool's call (only the first piece says so in its `type`).
 */
export function wireToolCallDelta(tc: DeltaToolCall, ofCustomTool: boolean): Record<string, unknown> {
  if (!ofCustomTool) return { ...tc };
  const custom: Record<string, string> = {};
  if (tc.function.name !== undefined) custom.name = tc.function.name;
  if (tc.function.arguments !== undefined) custom.input = tc.function.arguments;
  return { index: tc.index, ...(tc.id ? { id: tc.id } : {}), ...(tc.type ? { type: tc.type } : {}), custom };
}

/** A chat request as a caller sends it on /v1/chat/completions: custom tools and calls in OpenAI's shape. */
export function chatRequestBody(req: ChatRequest): Record<string, unknown> {
  const { custom_tools: customTools, ...rest } = req;
  return {
    ...rest,
    ...(customTools?.length ? { tools: [...(req.tools ?? []), ...customTools] } : {}),
    messages: req.messages.map((m) => (m.role === "assistant" && m.tool_calls ? { ...m, tool_calls: m.tool_calls.map(wireToolCall) } : m)),
  };
}

/** The name and input of an OpenAI `custom` tool call (or delta), or undefined when `raw` is not one. */
export function customCallOf(raw: Record<string, unknown>): { name?: string; input?: string } | undefined {
  if (raw.type !== "custom" && raw.custom === undefined) return undefined;
  const c = asRecord(raw.custom);
  const name = str(c.name);
  const input = typeof c.input === "string" ? c.input : undefined;
  return { ...(name !== undefined ? { name } : {}), ...(input !== undefined ? { input } : {}) };
}

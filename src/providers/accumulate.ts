/**
 * Folds StreamEvents back into a ParsedCompletion (for logging, caching and billing a streamed
 * response). Tool calls are merged by their stable `index`; the last usage event wins.
 */
import { emptyUsage, type AssistantMessage, type Choice, type FinishReason, type ImageOutput, type NormalizedUsage, type ParsedCompletion, type ReasoningDetail, type StreamEvent, type ToolCall, type ToolCallExtra } from "./types";

interface ChoiceState {
  content: string;
  reasoning: string;
  details: ReasoningDetail[];
  tools: Map<number, { id: string; type: ToolCall["type"]; name: string; arguments: string; extra?: ToolCallExtra }>;
  images: ImageOutput[];
  refusal: string;
  finish: FinishReason | null;
}

export class CompletionAccumulator {
  private readonly choices = new Map<number, ChoiceState>();
  private usage: NormalizedUsage | undefined;
  /** The first in-stream error, if any. */
  error: { message: string; errorType: string; status?: number } | undefined;

  private choice(i: number): ChoiceState {
    let c = this.choices.get(i);
    if (!c) {
      c = { content: "", reasoning: "", details: [], tools: new Map(), images: [], refusal: "", finish: null };
      this.choices.set(i, c);
    }
    return c;
  }

  push(e: StreamEvent): void {
    switch (e.type) {
      case "delta": {
        const c = this.choice(e.choiceIndex);
        if (e.delta.content) c.content += e.delta.content;
        if (e.delta.reasoning) c.reasoning += e.delta.reasoning;
        if (e.delta.reasoning_details) c.details.push(...e.delta.reasoning_details);
        if (e.delta.images) c.images.push(...e.delta.images);
        if (e.delta.refusal) c.refusal += e.delta.refusal;
        for (const tc of e.delta.tool_calls ?? []) {
          const t = c.tools.get(tc.index) ?? { id: "", type: "function", name: "", arguments: "" };
          if (tc.id) t.id = tc.id;
          if (tc.type) t.type = tc.type;
          if (tc.function.name) t.name = tc.function.name;
          if (tc.function.arguments) t.arguments += tc.function.arguments;
          if (tc.extra_content) t.extra = tc.extra_content;
          c.tools.set(tc.index, t);
        }
        break;
      }
      case "finish":
        this.choice(e.choiceIndex).finish = e.finishReason;
        break;
      case "usage":
        this.usage = e.usage;
        break;
      case "error":
        if (!this.error) {
          this.error = { message: e.message, errorType: e.errorType };
          if (e.status !== undefined) this.error.status = e.status;
        }
        break;
    }
  }

  /** Whether every choice seen so far has a finish reason (and at least one choice exists). */
  get finished(): boolean {
    return this.choices.size > 0 && [...this.choices.values()].every((c) => c.finish !== null);
  }

  get hasUsage(): boolean {
    return this.usage !== undefined;
  }

  result(): ParsedCompletion {
    const indexes = this.choices.size ? [...this.choices.keys()].sort((a, b) => a - b) : [0];
    const choices: Choice[] = indexes.map((index) => {
      const c = this.choices.get(index) ?? { content: "", reasoning: "", details: [], tools: new Map(), images: [], refusal: "", finish: null };
      const tools = [...c.tools.entries()].sort(([a], [b]) => a - b).map(([, t]): ToolCall => ({
        id: t.id,
        type: t.type,
        function: { name: t.name, arguments: t.arguments },
        ...(t.extra ? { extra_content: t.extra } : {}),
      }));
      const message: AssistantMessage = { role: "assistant", content: c.content || (tools.length || c.images.length || c.refusal ? null : "") };
      if (c.refusal) message.refusal = c.refusal;
      if (c.reasoning) message.reasoning = c.reasoning;
      if (c.details.length) message.reasoning_details = c.details;
      if (tools.length) message.tool_calls = tools;
      if (c.images.length) message.images = c.images;
      return { index, message, finish_reason: c.finish };
    });
    return { choices, usage: this.usage ?? emptyUsage() };
  }
}

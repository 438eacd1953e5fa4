/**
 * Exact input token counts from Anthropic's own counter (`POST /v1/messages/count_tokens`, free
 * and separately rate-limited there): the request's Messages body, only the fields that endpoint
 * takes (it refuses `max_tokens`, `stream`, sampling fields).
 */
import type { ChatRequest, UpstreamTarget } from "../types";
import { malformed } from "../errors";
import { asRecord } from "../json";
import { ANTHROPIC_VERSION, buildAnthropicBody } from "./request";

const COUNTED_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking"] as const;

export async function countAnthropicTokens(req: ChatRequest, target: UpstreamTarget, signal?: AbortSignal): Promise<number> {
  const full = buildAnthropicBody(req, target, { stream: false });
  const body: Record<string, unknown> = {};
  for (const k of COUNTED_FIELDS) if (full[k] !== undefined) body[k] = full[k];
  const res = await fetch(`${target.baseUrl}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": target.apiKey, "anthropic-version": ANTHROPIC_VERSION },
    body: JSON.stringify(body),
    redirect: "manual",
    ...(signal ? { signal } : {}),
  });
  if (!res.ok) {
    void res.body?.cancel();
    throw malformed(`count_tokens answered HTTP ${res.status}`);
  }
  const n = asRecord(await res.json()).input_tokens;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) throw malformed("count_tokens answered without input_tokens");
  return n;
}

/**
 * The steps every metered chat request takes in the Hono + zod lean bounds (hono-zod.ts,
 * durable.ts), shared so that the two rows differ only in what their meters add: a key from an
 * in-memory table, Switchboard's own zod chat schema, an allow-list check, the upstream call with
 * a timeout, and the answer's usage priced into `usage.cost` and `metadata`.
 */
import { Hono, type Context } from "hono";
import { parseChatRequest } from "../../src/routes/chat/schema";
import type { ChatRequest } from "../../src/providers/types";

export interface LeanKey {
  id: string;
  models: Set<string>;
  spentPico: number;
}
export interface UpstreamAnswer {
  usage?: { prompt_tokens?: number; completion_tokens?: number; cost?: number };
  choices?: Array<{ finish_reason?: string | null }>;
  [field: string]: unknown;
}
export interface LeanEnv<B extends object> {
  Bindings: B;
  Variables: { requestId: string };
}

const KEYS = new Map<string, LeanKey>([["bench-operator-key-openai", { id: "key_bench", models: new Set(["gpt-4o-mini"]), spentPico: 0 }]]);
export const PRICE_PICO = { prompt: 150_000, completion: 600_000 };
const UPSTREAM_TIMEOUT_MS = 120_000;

/** The app with its one middleware: every answer carries a request id. */
export function leanApp<B extends object>(): Hono<LeanEnv<B>> {
  const app = new Hono<LeanEnv<B>>();
  app.use("*", async (c, next) => {
    const id = crypto.randomUUID();
    c.set("requestId", id);
    c.header("x-request-id", id);
    await next();
  });
  return app;
}

/** A chat request that may go upstream: its key, its validated body and the caller's authorization. */
export interface AcceptedChat {
  key: LeanKey;
  body: ChatRequest;
  auth: string;
}

/** The key from memory, the body through the chat schema, the model on the key's allow-list; else the answer refusing it. */
export async function acceptChat<B extends object>(c: Context<LeanEnv<B>>): Promise<AcceptedChat | Response> {
  const auth = c.req.header("authorization") ?? "";
  const key = KEYS.get(auth.slice(7));
  if (!key) return c.json({ error: { message: "invalid key" } }, 401);
  const body = parseChatRequest(await c.req.json());
  if (!key.models.has(body.model)) return c.json({ error: { message: "model not allowed" } }, 400);
  return { key, body, auth };
}

/** The upstream call, bounded by a timeout; its JSON answer. */
export async function callUpstream(base: string, chat: AcceptedChat): Promise<UpstreamAnswer> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), UPSTREAM_TIMEOUT_MS);
  const upstream = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: chat.auth },
    body: JSON.stringify(chat.body),
    signal: abort.signal,
    redirect: "manual",
  });
  const answer = (await upstream.json()) as UpstreamAnswer;
  clearTimeout(timer);
  return answer;
}

/** What the answer cost, added to it as `usage.cost` and `metadata` (the log id, the route taken). */
export interface Priced {
  costPico: number;
  promptTokens: number;
  completionTokens: number;
  logId: string;
  routing: Array<{ provider: string; model: string; status_code: number }>;
}

export function priceAnswer(answer: UpstreamAnswer, model: string): Priced {
  const usage = answer.usage ?? {};
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const costPico = promptTokens * PRICE_PICO.prompt + completionTokens * PRICE_PICO.completion;
  const logId = crypto.randomUUID();
  const routing = [{ provider: "openai", model, status_code: 200 }];
  answer.usage = { ...usage, cost: costPico / 1e12 };
  answer.metadata = { log_id: logId, used_provider: "openai", used_model: model, routing };
  return { costPico, promptTokens, completionTokens, logId, routing };
}

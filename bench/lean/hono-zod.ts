/**
 * The lean bound with the stack Switchboard must use: the same work as minimal.js, routed by Hono
 * (one middleware, one route) and validated by Switchboard's own zod schema for chat bodies.
 * What remains between this row and Switchboard is the gateway's own logic.
 */
import { Hono } from "hono";
import { parseChatRequest } from "../../src/routes/chat/schema";

interface Bindings {
  DB: D1Database;
  UPSTREAM: string;
}
interface UpstreamAnswer {
  usage?: { prompt_tokens?: number; completion_tokens?: number; cost?: number };
  [field: string]: unknown;
}

const KEYS = new Map([["bench-operator-key-openai", { id: "key_bench", models: new Set(["gpt-4o-mini"]), spentPico: 0 }]]);
const PRICE_PICO = { prompt: 150_000, completion: 600_000 };
let rows: Array<Array<string | number>> = [];
let flushing = false;

function flush(env: Bindings): Promise<unknown> {
  const batch = rows;
  rows = [];
  flushing = false;
  const insert = env.DB.prepare("INSERT INTO log VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  return env.DB.batch(batch.map((r) => insert.bind(...r)));
}

const app = new Hono<{ Bindings: Bindings }>();
app.use("*", async (c, next) => {
  c.header("x-request-id", crypto.randomUUID());
  await next();
});
app.post("/v1/chat/completions", async (c) => {
  const started = Date.now();
  const auth = c.req.header("authorization") ?? "";
  const key = KEYS.get(auth.slice(7));
  if (!key) return c.json({ error: { message: "invalid key" } }, 401);
  const body = parseChatRequest(await c.req.json());
  if (!key.models.has(body.model)) return c.json({ error: { message: "model not allowed" } }, 400);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 120_000);
  const upstream = await fetch(`${c.env.UPSTREAM}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: auth },
    body: JSON.stringify(body),
    signal: abort.signal,
    redirect: "manual",
  });
  const answer = (await upstream.json()) as UpstreamAnswer;
  clearTimeout(timer);
  const usage = answer.usage ?? {};
  const cost = (usage.prompt_tokens ?? 0) * PRICE_PICO.prompt + (usage.completion_tokens ?? 0) * PRICE_PICO.completion;
  key.spentPico += cost;
  const logId = crypto.randomUUID();
  const routing = [{ provider: "openai", model: body.model, status_code: 200 }];
  answer.usage = { ...usage, cost: cost / 1e12 };
  answer.metadata = { log_id: logId, used_provider: "openai", used_model: body.model, routing };
  rows.push([logId, key.id, body.model, "openai", 200, usage.prompt_tokens ?? 0, usage.completion_tokens ?? 0, cost, started, Date.now() - started, JSON.stringify(routing)]);
  if (!flushing) {
    flushing = true;
    c.executionCtx.waitUntil(new Promise((r) => setTimeout(r, 1000)).then(() => flush(c.env)));
  }
  return c.json(answer);
});

export default app;

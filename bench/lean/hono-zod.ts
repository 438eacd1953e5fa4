/**
 * The lean bound with the stack Switchboard must use: the same work as minimal.js, routed by Hono
 * (one middleware, one route) and validated by Switchboard's own zod schema for chat bodies
 * (chat-steps.ts). Spend stays in isolate memory and log rows go to D1 in a batch once a second.
 */
import { acceptChat, callUpstream, leanApp, priceAnswer } from "./chat-steps";

interface Bindings {
  DB: D1Database;
  UPSTREAM: string;
}

let rows: Array<Array<string | number>> = [];
let flushing = false;

function flush(env: Bindings): Promise<unknown> {
  const batch = rows;
  rows = [];
  flushing = false;
  const insert = env.DB.prepare("INSERT INTO log VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  return env.DB.batch(batch.map((r) => insert.bind(...r)));
}

const app = leanApp<Bindings>();
app.post("/v1/chat/completions", async (c) => {
  const started = Date.now();
  const chat = await acceptChat(c);
  if (chat instanceof Response) return chat;
  const answer = await callUpstream(c.env.UPSTREAM, chat);
  const p = priceAnswer(answer, chat.body.model);
  chat.key.spentPico += p.costPico;
  rows.push([p.logId, chat.key.id, chat.body.model, "openai", 200, p.promptTokens, p.completionTokens, p.costPico, started, Date.now() - started, JSON.stringify(p.routing)]);
  if (!flushing) {
    flushing = true;
    c.executionCtx.waitUntil(new Promise((r) => setTimeout(r, 1000)).then(() => flush(c.env)));
  }
  return c.json(answer);
});

export default app;

// The lean bound, no framework: what any metered gateway does per chat request, written as
// cheaply as this runtime allows. A key from an in-memory table (no hashing, no IAM, no budget
// objects), JSON parse, an allow-list check, the upstream call with a timeout, the answer's usage
// priced, and one log row per request batched into D1 once a second. Switchboard cannot be
// cheaper than this; `npm run bench` shows how far each target sits from the floor.
const KEYS = new Map([["bench-operator-key-openai", { id: "key_bench", models: new Set(["gpt-4o-mini"]), spentPico: 0 }]]);
const PRICE_PICO = { prompt: 150_000, completion: 600_000 };
let rows = [];
let flushing = false;

function flush(env) {
  const batch = rows;
  rows = [];
  flushing = false;
  const insert = env.DB.prepare("INSERT INTO log VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  return env.DB.batch(batch.map((r) => insert.bind(...r)));
}

export default {
  async fetch(req, env, ctx) {
    const started = Date.now();
    const auth = req.headers.get("authorization") ?? "";
    const key = KEYS.get(auth.slice(7));
    if (!key) return new Response('{"error":{"message":"invalid key"}}', { status: 401 });
    let body;
    try {
      body = JSON.parse(await req.text());
    } catch {
      return new Response('{"error":{"message":"invalid JSON"}}', { status: 400 });
    }
    if (typeof body.model !== "string" || !Array.isArray(body.messages) || !key.models.has(body.model)) {
      return new Response('{"error":{"message":"invalid request"}}', { status: 400 });
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 120_000);
    const upstream = await fetch(`${env.UPSTREAM}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: auth },
      body: JSON.stringify(body),
      signal: abort.signal,
      redirect: "manual",
    });
    const answer = await upstream.json();
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
      ctx.waitUntil(new Promise((r) => setTimeout(r, 1000)).then(() => flush(env)));
    }
    return new Response(JSON.stringify(answer), { headers: { "content-type": "application/json", "x-request-id": logId } });
  },
};

// @ts-check
/**
 * Receivers for the gateway's outbound deliveries (OpenTelemetry collectors, webhook endpoints),
 * for tests. `POST /receiver/<name>[/fail=<n>]/...` records the request under <name> and answers
 * 200, except the first <n> requests to that name, which get 503 (a receiver that is down, then
 * up). `GET /receiver/<name>` lists what was recorded: `[{ path, headers, body, status }]` (body as
 * text), the failed requests included with their status.
 */

/** @type {Map<string, Array<{ path: string, headers: Record<string, unknown>, body: string, status: number }>>} */
const received = new Map();

/** @type {import("./server.mjs").FakeRoute[]} */
export const receiverRoutes = [
  {
    name: "delivery receiver: recorded requests",
    match: (req) => req.provider === "receiver" && req.method === "GET",
    handle(req, res) {
      const name = req.path.split("/")[1] ?? "";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received.get(name) ?? []));
    },
  },
  {
    name: "delivery receiver: a POST",
    match: (req) => req.provider === "receiver" && req.method === "POST",
    handle(req, res) {
      const [, name = "", ...rest] = req.path.split("/");
      const fail = Number(/^fail=(\d+)$/.exec(rest[0] ?? "")?.[1] ?? 0);
      const list = received.get(name) ?? [];
      const status = list.length < fail ? 503 : 200;
      list.push({ path: req.path, headers: req.headers, body: req.rawBody.toString("utf8"), status });
      received.set(name, list);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(status === 200 ? "{}" : JSON.stringify({ error: "down" }));
    },
  },
];

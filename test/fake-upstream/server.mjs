// @ts-check
/**
 * Fake upstream providers for tests and offline local runs. NOT a production component.
 * One HTTP server on 127.0.0.1; each provider lives under `/<provider-id>` (its `<ID>_BASE_URL`),
 * e.g. `http://127.0.0.1:PORT/anthropic/v1/messages`. Handlers are registered in routes.mjs, one
 * module per wire format or endpoint family, each answering with payloads shaped like the
 * provider's public API reference.
 */
import http from "node:http";
import { replayOf, storeReplay, writeReplay } from "./replay.mjs";
import { routes } from "./routes.mjs";

/**
 * @typedef {object} FakeRequest
 * @property {string} provider   first path segment (provider id)
 * @property {string} path       the rest of the path, starting with "/"
 * @property {URLSearchParams} query
 * @property {string} method
 * @property {http.IncomingHttpHeaders} headers
 * @property {Buffer} rawBody
 * @property {any} body           parsed JSON body, or undefined
 * @property {number} receivedAt  when the server had the whole request (ms since the epoch)
 */

/**
 * @typedef {object} FakeRoute
 * @property {string} name
 * @property {(req: FakeRequest) => boolean} match
 * @property {(req: FakeRequest, res: http.ServerResponse) => void | Promise<void>} handle
 */

/** @type {Map<string, FakeRequest[]>} requests recorded by tag (see `recordTag`) */
const recorded = new Map();

/**
 * @param {{ port?: number, host?: string, onTimes?: (arrived: number, finished: number) => void }} [opts]
 *   `onTimes`: for the bench's c=1 split, when each request's headers arrived and when its answer
 *   was fully written (`performance.now()`, this process's clock, the same as the bench client's).
 * @returns {Promise<{ port: number, url: string, close: () => Promise<void> }>}
 */
export async function startFakeUpstream(opts = {}) {
  const onTimes = opts.onTimes;
  const server = http.createServer(async (req, res) => {
    if (onTimes) {
      const arrived = performance.now();
      res.on("finish", () => onTimes(arrived, performance.now()));
    }
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const rawBody = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", "http://fake");
      // Test introspection: GET /__recorded/<tag> returns the upstream requests that carried the tag.
      if (url.pathname.startsWith("/__recorded/")) {
        const tag = decodeURIComponent(url.pathname.slice("/__recorded/".length));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify((recorded.get(tag) ?? []).map(({ rawBody: _r, ...rest }) => rest)));
        return;
      }
      // Test set-up: POST /__replay/<id> stores an exact answer (replay.mjs).
      if (url.pathname.startsWith("/__replay/") && req.method === "POST") {
        storeReplay(decodeURIComponent(url.pathname.slice("/__replay/".length)), rawBody);
        res.writeHead(204).end();
        return;
      }
      const [, provider = "", ...rest] = url.pathname.split("/");
      let body;
      if (rawBody.length && String(req.headers["content-type"] ?? "").includes("json")) {
        try { body = JSON.parse(rawBody.toString("utf8")); } catch { body = undefined; }
      }
      /** @type {FakeRequest} */
      const fake = { provider, path: "/" + rest.join("/"), query: url.searchParams, method: req.method ?? "GET", headers: req.headers, rawBody, body, receivedAt: Date.now() };
      const tag = recordTag(rawBody.toString("utf8"));
      if (tag) recorded.set(tag, [...(recorded.get(tag) ?? []), fake]);
      const replay = replayOf(rawBody.toString("utf8"));
      if (replay) return await writeReplay(replay, res);
      const route = routes.find((r) => r.match(fake));
      if (!route) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake upstream: no handler for ${req.method} ${req.url}`, type: "not_found" } }));
        return;
      }
      await route.handle(fake, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake upstream crashed: ${String(err)}`, type: "server_error" } }));
    }
  });
  // Keep idle connections open longer than any client would: with Node's 5 s default, the server
  // can close a socket at the moment the gateway reuses it, which shows up as a spurious network
  // error under load.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  await new Promise((resolve) => server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve(undefined)); }),
  };
}

/**
 * A request body containing `[[tag:<id>]]` is recorded under <id>, so a test can fetch
 * `${FAKE_UPSTREAM_URL}/__recorded/<id>` and assert exactly what the gateway sent upstream.
 * @param {string} text
 */
export function recordTag(text) {
  const m = /\[\[tag:([A-Za-z0-9_.-]+)\]\]/.exec(text);
  return m ? m[1] : undefined;
}

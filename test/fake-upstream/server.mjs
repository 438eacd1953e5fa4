// @ts-check
/**
 * Fake upstream providers for tests and offline local runs. NOT a production component.
 * One HTTP server on 127.0.0.1; each provider lives under `/<provider-id>` (its `<ID>_BASE_URL`).
 * The wire-format handlers in this folder answer with payloads shaped like each provider's public
 * API reference.
 */
import http from "node:http";

/**
 * @param {{ port?: number, host?: string }} [opts]
 * @returns {Promise<{ port: number, url: string, close: () => Promise<void> }>}
 */
export async function startFakeUpstream(opts = {}) {
  const server = http.createServer((req, res) => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `fake upstream: no handler for ${req.method} ${req.url}` } }));
  });
  await new Promise((resolve) => server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve(undefined)); }),
  };
}

// @ts-check
/**
 * The lean bounds (`npm run bench` rows "lean bound ..."): what the work every metered chat request
 * needs costs in this runtime when written with nothing else, without and with the stack
 * Switchboard is built on (Hono, zod), and (`--peers --lean`) the durable bound: the Hono + zod
 * bound plus what the product's rules demand of every request (a key object holding the global
 * spend cap and each record durably before the answer, records through a queue into R2 and D1).
 * They put the targets in proportion: a gateway can only be slower than its bound. Sources:
 * bench/lean/minimal.js, bench/lean/hono-zod.ts and bench/lean/durable.ts.
 */
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";

const LOG_TABLE =
  "CREATE TABLE log (id TEXT PRIMARY KEY, key_id TEXT, model TEXT, provider TEXT, status INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, cost_pico INTEGER, created_at INTEGER, latency_ms INTEGER, routing TEXT)";

/**
 * Bundles bench/lean/NAME.ts with the esbuild wrangler itself uses (same version, no extra dependency).
 * @param {string} root repository root
 * @param {string} name source file name without `.ts`
 */
async function bundleLean(root, name) {
  const require = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const esbuild = require("esbuild");
  const outdir = path.join(root, "dist", "bench-lean");
  mkdirSync(outdir, { recursive: true });
  const outfile = path.join(outdir, `${name}.js`);
  await esbuild.build({
    entryPoints: [path.join(root, "bench", "lean", `${name}.ts`)],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    outfile,
    // The runtime's own modules, as wrangler leaves them.
    external: ["cloudflare:*"],
    logLevel: "error",
  });
  return readFileSync(outfile, "utf8");
}

/**
 * Starts the lean bounds next to the other targets; returns them as bench targets. The durable
 * bound starts only when given a port (`ports.durable`; the peers bench's `--lean`).
 * @param {string} root repository root
 * @param {string} upstreamUrl fake upstream base URL
 * @param {(options: object) => Promise<{ mf: any, url: string, pid: number | undefined }>} startMiniflare
 * @param {{ minimal: number, honoZod: number, durable?: number }} ports
 */
export async function startLeanBounds(root, upstreamUrl, startMiniflare, ports = { minimal: 0, honoZod: 0 }) {
  const common = { modules: true, d1Databases: ["DB"], bindings: { UPSTREAM: `${upstreamUrl}/openai` }, compatibilityDate: "2026-11-17", host: "127.0.0.1" };
  const minimal = await startMiniflare({ ...common, port: ports.minimal, name: "lean-minimal", script: readFileSync(path.join(root, "bench", "lean", "minimal.js"), "utf8") });
  const honoZod = await startMiniflare({ ...common, port: ports.honoZod, name: "lean-hono-zod", script: await bundleLean(root, "hono-zod") });
  for (const s of [minimal, honoZod]) await (await s.mf.getD1Database("DB")).prepare(LOG_TABLE).run();
  const durable = ports.durable === undefined ? null : await startMiniflare({
    ...common,
    port: ports.durable,
    name: "lean-durable",
    script: await bundleLean(root, "durable"),
    durableObjects: { KEY_OBJECT: { className: "KeyObject", useSQLite: true } },
    // The batch settings of Switchboard's LOGS consumer (wrangler.jsonc).
    queueProducers: { LOGS: { queueName: "lean-logs" } },
    queueConsumers: { "lean-logs": { maxBatchSize: 100, maxBatchTimeout: 5 } },
    r2Buckets: ["LOGS_BUCKET"],
  });
  return {
    servers: [minimal, honoZod, ...(durable ? [durable] : [])],
    durable,
    targets: (chatBody, headers) => [
      { name: "lean bound: parse, fetch, price, log (no framework)", url: `${minimal.url}/v1/chat/completions`, body: chatBody, headers, pid: minimal.pid },
      { name: "lean bound + Hono + zod", url: `${honoZod.url}/v1/chat/completions`, body: chatBody, headers, pid: honoZod.pid },
      ...(durable ? [{ name: DURABLE_BOUND, url: `${durable.url}/v1/chat/completions`, body: chatBody, headers, pid: durable.pid }] : []),
    ],
  };
}

export const DURABLE_BOUND = "durable bound: Hono + zod + key object + queue";

/**
 * What the durable bound stored after a run: the rows its key object still holds, the rows its
 * queue consumer wrote to D1 and the objects it wrote to R2 (`--peers --lean` prints it).
 * @param {{ mf: any }} durable the durable bound's server
 */
export async function durableBoundStored(durable) {
  const db = await durable.mf.getD1Database("DB");
  // The table is made by the consumer's first batch: none yet, no rows.
  const made = await db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'request_log'").first();
  const d1Rows = made ? (await db.prepare("SELECT COUNT(*) AS n FROM request_log").first()).n : 0;
  const bucket = await durable.mf.getR2Bucket("LOGS_BUCKET");
  let r2Objects = 0;
  let cursor;
  do {
    const page = await bucket.list({ cursor });
    r2Objects += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return { d1Rows, r2Objects };
}

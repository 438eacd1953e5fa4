// @ts-check
/**
 * The lean bounds (`npm run bench` rows "lean bound ..."): what the work every metered chat request
 * needs costs in this runtime when written with nothing else, without and with the stack
 * Switchboard is built on (Hono, zod). They put the targets in proportion: a gateway can only be
 * slower than its lean bound. Sources: bench/lean/minimal.js and bench/lean/hono-zod.ts.
 */
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";

const LOG_TABLE =
  "CREATE TABLE log (id TEXT PRIMARY KEY, key_id TEXT, model TEXT, provider TEXT, status INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, cost_pico INTEGER, created_at INTEGER, latency_ms INTEGER, routing TEXT)";

/** Bundles hono-zod.ts with the esbuild wrangler itself uses (same version, no extra dependency). */
async function bundleHonoZod(root) {
  const require = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const esbuild = require("esbuild");
  const outdir = path.join(root, "dist", "bench-lean");
  mkdirSync(outdir, { recursive: true });
  const outfile = path.join(outdir, "hono-zod.js");
  await esbuild.build({
    entryPoints: [path.join(root, "bench", "lean", "hono-zod.ts")],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    outfile,
    logLevel: "error",
  });
  return readFileSync(outfile, "utf8");
}

/**
 * Starts both lean bounds next to the other targets; returns them as bench targets.
 * @param {string} root repository root
 * @param {string} upstreamUrl fake upstream base URL
 * @param {(options: object) => Promise<{ mf: any, url: string, pid: number | undefined }>} startMiniflare
 */
export async function startLeanBounds(root, upstreamUrl, startMiniflare, ports = { minimal: 0, honoZod: 0 }) {
  const common = { modules: true, d1Databases: ["DB"], bindings: { UPSTREAM: `${upstreamUrl}/openai` }, compatibilityDate: "2026-11-17", host: "127.0.0.1" };
  const minimal = await startMiniflare({ ...common, port: ports.minimal, name: "lean-minimal", script: readFileSync(path.join(root, "bench", "lean", "minimal.js"), "utf8") });
  const honoZod = await startMiniflare({ ...common, port: ports.honoZod, name: "lean-hono-zod", script: await bundleHonoZod(root) });
  for (const s of [minimal, honoZod]) await (await s.mf.getD1Database("DB")).prepare(LOG_TABLE).run();
  return {
    servers: [minimal, honoZod],
    targets: (chatBody, headers) => [
      { name: "lean bound: parse, fetch, price, log (no framework)", url: `${minimal.url}/v1/chat/completions`, body: chatBody, headers, pid: minimal.pid },
      { name: "lean bound + Hono + zod", url: `${honoZod.url}/v1/chat/completions`, body: chatBody, headers, pid: honoZod.pid },
    ],
  };
}

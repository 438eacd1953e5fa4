// @ts-check
/**
 * The bench run's options (its command-line flags, bench/run.mjs lists them) and the process
 * settings every mode shares: no wrangler metrics, Miniflare's storage on tmpfs, no cf fetch.
 */
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function statSafe(p) {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const args = process.argv.slice(2);
export const flag = (name) => args.includes(`--${name}`);
export const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? Number(args[i + 1]) : def;
};
export const QUICK = flag("quick");
export const ROUNDS = opt("rounds", QUICK ? 1 : 3);
export const SECONDS = opt("seconds", QUICK ? 2 : 5);
export const STREAM_SAMPLES = QUICK ? 20 : 60;
export const WORLD = flag("world");
// --world: the latencies of a caller far from the primary region (bench/world.mjs).
export const WORLD_OPTS = {
  objMs: opt("obj-latency", 150),
  primaryMs: opt("d1-primary", 150),
  replicaMs: opt("d1-replica", 5),
  kvMs: opt("kv-latency", 5),
  ttft: opt("ttft", 400),
  hotSeconds: opt("world-seconds", QUICK ? 4 : 10),
  tailKeys: opt("tail-keys", QUICK ? 8 : 24),
  tailSeconds: opt("tail-seconds", QUICK ? 15 : 60),
  coldKeys: opt("cold-keys", QUICK ? 12 : 48),
  refusalRequests: opt("refusal-requests", 10),
  // The hot rows run in this many alternating blocks per build (floor, then each build).
  hotBlocks: opt("hot-blocks", 2),
  noCache: flag("world-no-cache"),
  // --world-strict: the bench organization in strict policy mode (no upstream call before the
  // key's rules are confirmed: docs/admission.md), to measure what it costs each class.
  strict: flag("world-strict"),
};
// --world-failure: a provider that hangs or stalls, with the default timeouts, with and without
// hedging (bench/world-failure.mjs); the objects and storage are near (no binding latency).
export const FAILURE = flag("world-failure");
export const FAILURE_OPTS = { ttft: opt("ttft", 400), requests: opt("failure-requests", QUICK ? 8 : 24) };
// --world --regions: routing per caller continent instead (bench/world-regions.mjs); no binding latency.
export const REGIONS = WORLD && flag("regions");
export const REGIONS_OPTS = {
  seconds: opt("regions-seconds", QUICK ? 30 : 60),
  concurrency: opt("regions-concurrency", 3),
  ttft: opt("regions-ttft", 200),
  directSamples: QUICK ? 15 : 40,
  keyRequests: opt("key-requests", 1000),
  limitedRequests: QUICK ? 50 : 100,
  cpuRounds: QUICK ? 1 : 2,
  cpuSeconds: QUICK ? 3 : 5,
  port: opt("regions-port", 8823),
  inspectorPort: opt("regions-inspector-port", opt("regions-port", 8823) + 1000),
};
export const DO_LATENCY_MS = WORLD && !REGIONS ? WORLD_OPTS.objMs : opt("do-latency", 0);

export const ADMIN_TOKEN = "bench-admin-token-0123456789";
export const KEY_HASH_SECRET = "bench-key-hash-secret-0123456789abcdef";
export const PROVIDER_IDS = ["openai", "azure", "anthropic", "google-ai-studio", "groq", "together-ai", "mistral", "deepseek"];
export const envPrefix = (id) => id.toUpperCase().replace(/[^A-Z0-9]/g, "_");

process.env.WRANGLER_SEND_METRICS = "false";
// Miniflare keeps "in-memory" D1/DO/KV storage as SQLite files in a temp directory. On disk, their
// fsyncs run on workerd's only thread and would be charged to the request; on Cloudflare that
// storage lives elsewhere. Keep it on tmpfs when the machine has one.
if (!process.env.TMPDIR && statSafe("/dev/shm")) {
  const dir = `/dev/shm/switchboard-bench-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
}
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

#!/usr/bin/env node
// @ts-check
/**
 * Runs the MCP conformance suite (`@modelcontextprotocol/conformance`) against the server's
 * stateless `/mcp` endpoint. Not part of `npm test` (it needs Node 22 and the suite from the npm
 * registry). See docs/mcp-conformance.md for the results and the scenarios that do not apply.
 *
 *   node scripts/mcp-conformance.mjs --node <node 22 binary> --conformance <suite dist/index.js>
 *        [--port 8792] [--scenarios a,b,c | --scenarios all]
 *
 * 1. starts a throw-away local gateway with one gateway key (scripts/lib/throwaway-gateway.mjs);
 * 2. puts a small proxy in front that adds `Authorization: Bearer <key>` (the suite sends no
 *    credentials) and streams everything else through unchanged;
 * 3. runs each scenario with `conformance server --url <proxy>/mcp --scenario <name>`;
 * 4. prints one line per scenario and a summary; stops everything.
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { parseArgs } from "./lib/local.mjs";
import { QUIET_ENV, startThrowawayGateway } from "./lib/throwaway-gateway.mjs";

/** Scenarios that apply to a stateless, tools-only server (docs/mcp-conformance.md says why the rest do not). */
export const APPLICABLE = ["server-initialize", "ping", "tools-list", "server-sse-polling", "server-sse-multiple-streams", "dns-rebinding-protection"];

const args = parseArgs(process.argv.slice(2));
const port = typeof args.port === "string" ? Number(args.port) : 8792;
const proxyPort = port + 1;
const node = typeof args.node === "string" ? args.node : process.execPath;
const suite = typeof args.conformance === "string" ? args.conformance : null;
const log = (/** @type {string} */ msg) => console.log(`[mcp-conformance] ${msg}`);

/** @type {Array<() => void>} */
const cleanups = [];
const stopAll = () => {
  for (const c of cleanups.splice(0).reverse()) c();
};

/**
 * Forwards every request to `target`, adding the bearer credential.
 * @param {string} target @param {string} key
 */
function startProxy(target, key) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers.set(k, v);
    headers.set("authorization", `Bearer ${key}`);
    try {
      const upstream = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method,
        headers,
        body: chunks.length && req.method !== "GET" && req.method !== "HEAD" ? Buffer.concat(chunks) : undefined,
      });
      /** @type {Record<string, string>} */
      const out = {};
      upstream.headers.forEach((v, k) => {
        if (k !== "content-encoding" && k !== "content-length") out[k] = v;
      });
      res.writeHead(upstream.status, out);
      if (upstream.body) Readable.fromWeb(/** @type {import("node:stream/web").ReadableStream} */ (upstream.body)).pipe(res);
      else res.end();
    } catch (err) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy error: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return new Promise((resolve) => server.listen(proxyPort, "127.0.0.1", () => resolve(server)));
}

/**
 * @param {string[]} argv
 * @returns {Promise<{ status: number | null, output: string }>}
 */
function runSuite(argv) {
  return new Promise((resolve) => {
    const child = spawn(node, argv, { env: QUIET_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGTERM"), 120_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

/** @returns {string[]} */
function allServerScenarios() {
  const listed = spawnSync(node, [/** @type {string} */ (suite), "list"], { encoding: "utf8", env: QUIET_ENV });
  const server = listed.stdout.split("Client scenarios")[0] ?? "";
  return [...server.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1] ?? "").filter(Boolean);
}

async function main() {
  if (!suite) throw new Error("--conformance <path to @modelcontextprotocol/conformance/dist/index.js> is required");
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  log(`suite ${suite} on node ${version}`);
  const scenarios = args.scenarios === "all" ? allServerScenarios() : typeof args.scenarios === "string" ? args.scenarios.split(",") : APPLICABLE;

  // The suite's legitimate requests name the proxy's origin: it is this gateway's, as far as the suite knows.
  const proxyOrigins = `http://127.0.0.1:${proxyPort},http://localhost:${proxyPort}`;
  const gateway = await startThrowawayGateway({ port, name: "conformance", log, vars: [`ALLOWED_ORIGINS:${proxyOrigins}`] });
  cleanups.push(gateway.stop);
  const proxy = /** @type {import("node:http").Server} */ (await startProxy(gateway.baseUrl, gateway.key));
  cleanups.push(() => proxy.close());
  const url = `http://127.0.0.1:${proxyPort}/mcp`;

  let passed = 0;
  /** @type {string[]} */
  const failed = [];
  for (const scenario of scenarios) {
    // Asynchronously: the proxy runs in this process and must keep serving meanwhile.
    const run = await runSuite([suite, "server", "--url", url, "--scenario", scenario]);
    const output = run.output;
    const ok = run.status === 0;
    if (ok) passed++;
    else failed.push(scenario);
    log(`${ok ? "PASS" : "FAIL"} ${scenario}`);
    if (!ok || args.verbose) console.log(output.trim().split("\n").map((l) => `    ${l}`).join("\n"));
  }
  console.log(`${passed} passed, ${failed.length} failed${failed.length ? ` (${failed.join(", ")})` : ""}`);
  if (failed.length) process.exitCode = 1;
}

process.on("SIGINT", () => {
  stopAll();
  process.exit(130);
});

main()
  .then(stopAll)
  .catch((err) => {
    console.error(`[mcp-conformance] ${err instanceof Error ? err.message : String(err)}`);
    stopAll();
    process.exitCode = 1;
  });

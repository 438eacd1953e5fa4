#!/usr/bin/env node
// @ts-check
/**
 * `npm run test:mcp-inspector` — checks the MCP server with the official MCP Inspector CLI
 * (not part of `npm test`: it downloads the inspector from the npm registry and starts wrangler).
 *
 *  1. applies the D1 migrations to a throw-away local state directory;
 *  2. starts `wrangler dev --port 8791` with random ADMIN_TOKEN / KEY_HASH_SECRET (`--var`,
 *     nothing written to `.dev.vars`);
 *  3. bootstraps an organization and a gateway key through the API;
 *  4. runs `npx @modelcontextprotocol/inspector --cli <url>/mcp --method tools/list` and checks
 *     that all eight tools are listed;
 *  5. stops wrangler (its whole process group) and removes the state directory.
 * Options: `--port N` (default 8791).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, api, parseArgs, randomToken } from "./lib/local.mjs";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const EXPECTED_TOOLS = ["get-account", "get-usage", "get-usage-breakdown", "chat", "generate-image", "generate-nano-banana", "list-models", "list-image-models"];
const args = parseArgs(process.argv.slice(2));
const port = typeof args.port === "string" ? Number(args.port) : 8791;
const baseUrl = `http://127.0.0.1:${port}`;
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const log = (/** @type {string} */ msg) => console.log(`[mcp-inspector] ${msg}`);

const state = mkdtempSync(join(tmpdir(), "switchboard-mcp-inspector-"));
const adminToken = randomToken(24);
const vars = [`ADMIN_TOKEN:${adminToken}`, `KEY_HASH_SECRET:${randomToken(32)}`, "ENVIRONMENT:development"];

/** @type {import("node:child_process").ChildProcess | null} */
let wrangler = null;

function stop() {
  if (wrangler?.pid) {
    try {
      process.kill(-wrangler.pid, "SIGTERM"); // the process group started below
    } catch {
      // already gone
    }
  }
  wrangler = null;
  rmSync(state, { recursive: true, force: true });
}

async function waitForServer(timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/mcp`, { headers: { accept: "application/json" } });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`wrangler dev did not answer on ${baseUrl} within ${timeoutMs / 1000}s`);
}

async function main() {
  log(`applying migrations to ${state}`);
  const migrate = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { cwd: ROOT, env, stdio: "inherit" });
  if (migrate.status !== 0) throw new Error("applying migrations failed");

  log(`starting wrangler dev on port ${port}`);
  wrangler = spawn(process.execPath, [WRANGLER, "dev", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", state, ...vars.flatMap((v) => ["--var", v])], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "inherit"],
    detached: true, // own process group, stopped as a whole
  });
  await waitForServer();

  const boot = await api(`${baseUrl}/v1/admin/organizations`, {
    method: "POST",
    token: adminToken,
    body: { name: "Inspector", plan: "pro", owner: { email: "inspector@example.test", name: "Inspector", password: "inspector-password-1" } },
  });
  if (boot.status !== 201) throw new Error(`bootstrap failed: ${boot.status} ${JSON.stringify(boot.json)}`);
  const key = await api(`${baseUrl}/v1/master/keys`, { method: "POST", token: boot.json.masterKey.token, body: { projectId: boot.json.project.id, description: "inspector" } });
  if (key.status !== 201) throw new Error(`key creation failed: ${key.status} ${JSON.stringify(key.json)}`);

  log(`running ${INSPECTOR} --cli ${baseUrl}/mcp --method tools/list`);
  const inspector = spawnSync(
    "npx",
    ["-y", INSPECTOR, "--cli", `${baseUrl}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${key.json.apiKey.token}`, "--method", "tools/list"],
    { cwd: ROOT, env, encoding: "utf8", timeout: 300_000 },
  );
  if (inspector.status !== 0) throw new Error(`inspector exited ${inspector.status}: ${inspector.stderr}`);
  const listed = JSON.parse(inspector.stdout);
  const names = (listed.tools ?? []).map((/** @type {{name: string}} */ t) => t.name).sort();
  const missing = EXPECTED_TOOLS.filter((t) => !names.includes(t));
  if (missing.length) throw new Error(`tools missing from tools/list: ${missing.join(", ")} (got ${names.join(", ")})`);
  log(`tools/list returned ${names.length} tools: ${names.join(", ")}`);
  console.log("1 passed, 0 failed");
}

process.on("SIGINT", () => {
  stop();
  process.exit(130);
});

main()
  .then(() => {
    stop();
  })
  .catch((err) => {
    console.error(`[mcp-inspector] ${err instanceof Error ? err.message : String(err)}`);
    console.log("0 passed, 1 failed");
    stop();
    process.exitCode = 1;
  });

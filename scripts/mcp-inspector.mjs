#!/usr/bin/env node
// @ts-check
/**
 * `npm run test:mcp-inspector` — checks the MCP server with the official MCP Inspector CLI
 * (not part of `npm test`: it downloads the inspector from the npm registry and starts wrangler).
 *
 *  1. starts a throw-away local gateway (scripts/lib/throwaway-gateway.mjs) with one gateway key;
 *  2. runs `npx @modelcontextprotocol/inspector --cli <url>/mcp --method tools/list` and checks
 *     that all eight tools are listed;
 *  3. stops wrangler (its whole process group) and removes the state directory.
 * Options: `--port N` (default 8791).
 */
import { spawnSync } from "node:child_process";
import { ROOT, parseArgs } from "./lib/local.mjs";
import { QUIET_ENV, startThrowawayGateway } from "./lib/throwaway-gateway.mjs";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const EXPECTED_TOOLS = ["get-account", "get-usage", "get-usage-breakdown", "chat", "generate-image", "generate-nano-banana", "list-models", "list-image-models"];
const args = parseArgs(process.argv.slice(2));
const port = typeof args.port === "string" ? Number(args.port) : 8791;
const log = (/** @type {string} */ msg) => console.log(`[mcp-inspector] ${msg}`);

/** @type {(() => void) | null} */
let stop = null;

async function main() {
  const gateway = await startThrowawayGateway({ port, name: "inspector", log });
  stop = gateway.stop;
  log(`running ${INSPECTOR} --cli ${gateway.baseUrl}/mcp --method tools/list`);
  const inspector = spawnSync(
    "npx",
    ["-y", INSPECTOR, "--cli", `${gateway.baseUrl}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${gateway.key}`, "--method", "tools/list"],
    { cwd: ROOT, env: QUIET_ENV, encoding: "utf8", timeout: 300_000 },
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
  stop?.();
  process.exit(130);
});

main()
  .then(() => stop?.())
  .catch((err) => {
    console.error(`[mcp-inspector] ${err instanceof Error ? err.message : String(err)}`);
    console.log("0 passed, 1 failed");
    stop?.();
    process.exitCode = 1;
  });

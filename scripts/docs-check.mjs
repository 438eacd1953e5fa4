#!/usr/bin/env node
// @ts-check
/**
 * `npm run docs:check` — runs every ```sh example of README.md and docs/*.md, as written, against a
 * local instance it starts itself, so the examples cannot drift from the code.
 *
 *  - starts `scripts/dev.mjs --offline --port 8748 --persist-to <temp dir>` (a fresh database and
 *    the local stand-in upstream; your `.dev.vars` secrets are used, your state is not touched);
 *  - runs each file's examples in order in one bash (`set -euo pipefail`, so a variable set in one
 *    block is there in the next), with `curl` failing on HTTP errors (`--fail-with-body`);
 *  - the only rewrites: `localhost:8787` -> the check's port, `./.dev-credentials.json` -> the
 *    check's credentials file.
 *
 * A block that cannot run offline or would not return (starting the server, deploying to
 * Cloudflare, a client that needs the network) carries the marker line
 * `<!-- docs-check: skip (reason) -->` right above its fence. Keep those rare.
 *
 *   npm run docs:check -- [--port 8748] [--list] [README.md docs/api.md ...]
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT, parseArgs } from "./lib/local.mjs";

export const SKIP_MARKER = /^<!--\s*docs-check:\s*skip\b.*-->\s*$/;

/**
 * @typedef {object} ShellBlock
 * @property {string} file
 * @property {number} line  line of the opening fence (1-based)
 * @property {string} code
 * @property {boolean} skip
 */

/**
 * Fenced ```sh / ```bash / ```shell blocks of a Markdown text.
 * @param {string} text
 * @param {string} file
 * @returns {ShellBlock[]}
 */
export function shellBlocks(text, file) {
  const lines = text.split("\n");
  /** @type {ShellBlock[]} */
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+)\s*(sh|bash|shell)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const fence = open[2] ?? "```";
    let j = i + 1;
    while (j < lines.length && !(lines[j] ?? "").trim().startsWith(fence)) j++;
    let k = i - 1;
    while (k >= 0 && (lines[k] ?? "").trim() === "") k--;
    out.push({ file, line: i + 1, code: lines.slice(i + 1, j).join("\n"), skip: k >= 0 && SKIP_MARKER.test((lines[k] ?? "").trim()) });
    i = j;
  }
  return out;
}

/** README.md and every docs/*.md, README first. */
export function documentationFiles(root = ROOT) {
  const docs = existsSync(join(root, "docs")) ? readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => join(root, "docs", f)) : [];
  return [join(root, "README.md"), ...docs];
}

/**
 * The bash script for one file's runnable blocks.
 * @param {ShellBlock[]} blocks
 * @param {{ port: number, credentials: string }} target
 */
export function scriptFor(blocks, target) {
  const header = [
    "set -euo pipefail",
    `cd ${JSON.stringify(ROOT)}`,
    // Fail on HTTP errors, show the body, end every answer with a newline.
    'curl() { command curl -sS --fail-with-body --max-time 120 "$@"; echo; }',
  ];
  const body = blocks
    .filter((b) => !b.skip)
    .map((b) => [`echo "::docs-check:: ${b.file}:${b.line}" >&2`, b.code.replaceAll("localhost:8787", `localhost:${target.port}`).replaceAll("./.dev-credentials.json", target.credentials)].join("\n"));
  return [...header, ...body, ""].join("\n");
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const port = typeof args.port === "string" ? Number(args.port) : 8748;
  const only = process.argv.slice(2).filter((a) => a.endsWith(".md"));
  const files = (only.length ? only.map((f) => join(ROOT, f)) : documentationFiles()).filter((f) => existsSync(f));
  const all = files.flatMap((f) => shellBlocks(readFileSync(f, "utf8"), relative(ROOT, f)));
  if (args.list) {
    for (const b of all) console.log(`${b.skip ? "skip" : "run "} ${b.file}:${b.line}`);
    return;
  }
  const state = mkdtempSync(join(tmpdir(), "switchboard-docs-check-"));
  const credentials = join(state, ".dev-credentials.json");
  console.log(`[docs:check] ${all.filter((b) => !b.skip).length} examples to run, ${all.filter((b) => b.skip).length} marked skip; starting a local instance on port ${port}`);
  const dev = spawn(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--offline", "--port", String(port), "--persist-to", state], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  let devLog = "";
  let devExited = false;
  dev.stdout?.on("data", (d) => (devLog += String(d)));
  dev.stderr?.on("data", (d) => (devLog += String(d)));
  dev.on("exit", () => (devExited = true));
  const stop = () => {
    if (!devExited && dev.pid) {
      try {
        process.kill(-dev.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  let failed = 0;
  try {
    const deadline = Date.now() + 180_000;
    while (!devLog.includes("Switchboard is running")) {
      if (devExited || Date.now() > deadline) throw new Error(`the local instance did not start:\n${devLog.slice(-3000)}`);
      await sleep(500);
    }
    for (const file of files) {
      const rel = relative(ROOT, file);
      const blocks = all.filter((b) => b.file === rel);
      if (!blocks.some((b) => !b.skip)) continue;
      // maxBuffer: the full catalogue (`GET /v1/models`) is more than spawnSync's default 1 MiB.
      const r = spawnSync("bash", ["-c", scriptFor(blocks, { port, credentials })], { cwd: ROOT, encoding: "utf8", timeout: 300_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
      const at = [...(r.stderr ?? "").matchAll(/::docs-check:: (\S+)/g)].at(-1)?.[1] ?? rel;
      if (r.status === 0) {
        console.log(`[docs:check] ok   ${rel} (${blocks.filter((b) => !b.skip).length} examples)`);
      } else {
        failed++;
        console.log(`[docs:check] FAIL ${at}\n--- stdout ---\n${(r.stdout ?? "").slice(-2000)}\n--- stderr ---\n${(r.stderr ?? "").replace(/::docs-check:: \S+\n/g, "").slice(-2000)}`);
      }
    }
  } finally {
    stop();
    await sleep(1000);
    rmSync(state, { recursive: true, force: true });
  }
  if (failed) {
    console.log(`[docs:check] ${failed} file(s) with a failing example`);
    process.exit(1);
  }
  console.log("[docs:check] every example ran");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`[docs:check] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

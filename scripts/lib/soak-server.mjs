// @ts-check
/**
 * The dev server a soak runs against (scripts/soak.mjs): `scripts/dev.mjs --offline` started from
 * a snapshot of the checkout, with its own state directory.
 *
 * Why a snapshot: `wrangler dev` watches the sources and restarts the runtime when one changes.
 * A restart answers the requests in flight with 503 "Your worker restarted mid-request" and drops
 * the local queue's messages (Miniflare keeps them in memory only), so an edit or a `git merge` in
 * the checkout during a run looked like a runtime failure and lost records. The snapshot (the
 * files the Worker and the dev script are built from, `node_modules` linked) keeps the run on the
 * code it started with. A reload that happens anyway is reported by `reloadsIn` and makes the run
 * inconclusive, not a finding.
 */
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, parseDevVars } from "./local.mjs";

/** What `wrangler dev` builds from and `scripts/dev.mjs` runs (its imports included). */
export const SNAPSHOT = ["src", "public", "migrations", "scripts", "test/fake-upstream", "package.json", "wrangler.jsonc", "tsconfig.json", "worker-configuration.d.ts"];

/** wrangler's own lines when it restarts the runtime (a watched file changed). */
const RELOAD = /Reloading local server/;
/**
 * Lines kept beyond the log's last lines (which a long run's request lines push out): restarts,
 * and how records took their way (a retried batch or send is the design working; they explain a
 * record that is late or missing).
 */
const NOTABLE = /Reloading local server|log batch not applied|log queue send failed|key spend report failed|Uncaught|unhandled error/i;
const MAX_NOTES = 2000;

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {{ url: string, adminToken: string, log: string[], notes: string[], stop: (keep: boolean) => void }} SoakServer
 */

/**
 * Starts the dev server on `port` / `inspectorPort` from a fresh snapshot and state directory, and
 * resolves once its demo organization exists (at most `startupMs`).
 * @param {{ port: number, inspectorPort: number, startupMs?: number }} opts
 * @returns {Promise<SoakServer>}
 */
export async function startSoakServer({ port, inspectorPort, startupMs = 180_000 }) {
  const base = mkdtempSync(join(tmpdir(), "switchboard-soak-"));
  const tree = join(base, "tree");
  const stateDir = join(base, "state");
  for (const entry of SNAPSHOT) {
    if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(tree, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
  // The checkout's secrets when it has them (dev.mjs creates them in the snapshot otherwise).
  if (existsSync(join(ROOT, ".dev.vars"))) copyFileSync(join(ROOT, ".dev.vars"), join(tree, ".dev.vars"));

  const child = spawn(process.execPath, [join(tree, "scripts", "dev.mjs"), "--offline", "--port", String(port), "--inspector-port", String(inspectorPort), "--persist-to", stateDir], {
    cwd: tree,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  /** @type {string[]} */
  const log = [];
  /** @type {string[]} */
  const notes = [];
  const launched = Date.now();
  // Each line with the seconds since the launch, to see where a slow start or a late record went.
  const keepLines = (/** @type {Buffer} */ b) => {
    const at = `+${((Date.now() - launched) / 1000).toFixed(1)}s`;
    for (const line of b.toString().split("\n")) {
      if (!line.trim()) continue;
      log.push(`${at} ${line}`);
      if (NOTABLE.test(line) && notes.length < MAX_NOTES) notes.push(`${at} ${line}`);
    }
    if (log.length > 4000) log.splice(0, log.length - 4000);
  };
  child.stdout?.on("data", keepLines);
  child.stderr?.on("data", keepLines);

  const stop = (/** @type {boolean} */ keep) => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    if (keep) {
      writeFileSync(join(base, "server.log"), log.join("\n") + "\n");
      console.log(`[soak] snapshot, state and the server log's last lines kept in ${base}`);
    } else rmSync(base, { recursive: true, force: true });
  };

  const creds = join(stateDir, ".dev-credentials.json");
  const deadline = Date.now() + startupMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      stop(true);
      throw new Error(`dev server exited (${child.exitCode}):\n${log.slice(-30).join("\n")}`);
    }
    if (existsSync(creds)) break;
    // dev.mjs keeps running when its bootstrap failed; no credentials will come.
    if (log.some((l) => l.includes("bootstrap failed"))) break;
    await sleep(500);
  }
  if (!existsSync(creds)) {
    stop(true);
    throw new Error(`dev server did not start:\n${log.slice(-30).join("\n")}`);
  }
  const vars = parseDevVars(readFileSync(join(tree, ".dev.vars"), "utf8"));
  return { url: `http://127.0.0.1:${port}`, adminToken: vars.ADMIN_TOKEN ?? "", log, notes, stop };
}

/** How many times the runtime was restarted according to the server log. @param {string[]} log */
export const reloadsIn = (log) => log.filter((l) => RELOAD.test(l)).length;

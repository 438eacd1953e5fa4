// @ts-check
/**
 * A throw-away local gateway for the MCP client checks (mcp-inspector, mcp-conformance):
 * migrations applied to a temporary state directory, `wrangler dev` on `port` (own process group)
 * with random ADMIN_TOKEN / KEY_HASH_SECRET passed as `--var` (nothing written to `.dev.vars`),
 * an organization bootstrapped and one gateway key created. `stop()` ends wrangler's process
 * group and removes the state directory.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, api, randomToken } from "./local.mjs";

const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
export const QUIET_ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/**
 * @param {{ port: number, name: string, log: (msg: string) => void, vars?: string[] }} opts
 *   `vars`: further `NAME:value` Worker vars.
 * @returns {Promise<{ baseUrl: string, key: string, state: string, stop: () => void }>}
 */
export async function startThrowawayGateway({ port, name, log, vars: extraVars = [] }) {
  const baseUrl = `http://127.0.0.1:${port}`;
  const state = mkdtempSync(join(tmpdir(), `switchboard-${name}-`));
  const adminToken = randomToken(24);
  const vars = [`ADMIN_TOKEN:${adminToken}`, `KEY_HASH_SECRET:${randomToken(32)}`, "ENVIRONMENT:development", ...extraVars];
  /** @type {import("node:child_process").ChildProcess | null} */
  let wrangler = null;
  const stop = () => {
    if (wrangler?.pid) {
      try {
        process.kill(-wrangler.pid, "SIGTERM"); // the process group started below
      } catch {
        // already gone
      }
    }
    wrangler = null;
    rmSync(state, { recursive: true, force: true });
  };
  try {
    log(`applying migrations to ${state}`);
    const migrate = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { cwd: ROOT, env: QUIET_ENV, stdio: "inherit" });
    if (migrate.status !== 0) throw new Error("applying migrations failed");
    log(`starting wrangler dev on port ${port}`);
    wrangler = spawn(process.execPath, [WRANGLER, "dev", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", state, ...vars.flatMap((v) => ["--var", v])], {
      cwd: ROOT,
      env: QUIET_ENV,
      stdio: ["ignore", "ignore", "inherit"],
      detached: true, // own process group, stopped as a whole
    });
    await waitForServer(baseUrl);
    const boot = await api(`${baseUrl}/v1/admin/organizations`, {
      method: "POST",
      token: adminToken,
      body: { name, plan: "pro", credits: "25", owner: { email: `${name}@example.test`, name, password: `${name}-password-1` } },
    });
    if (boot.status !== 201) throw new Error(`bootstrap failed: ${boot.status} ${JSON.stringify(boot.json)}`);
    const key = await api(`${baseUrl}/v1/master/keys`, { method: "POST", token: boot.json.masterKey.token, body: { projectId: boot.json.project.id, description: name } });
    if (key.status !== 201) throw new Error(`key creation failed: ${key.status} ${JSON.stringify(key.json)}`);
    return { baseUrl, key: key.json.apiKey.token, state, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/** @param {string} baseUrl */
async function waitForServer(baseUrl, timeoutMs = 60_000) {
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

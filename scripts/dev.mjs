#!/usr/bin/env node
// @ts-check
/**
 * `npm run dev` — one command from a fresh clone to a working local gateway:
 *  1. creates `.dev.vars` when missing (random ADMIN_TOKEN and KEY_HASH_SECRET, ENVIRONMENT=development);
 *  2. applies the D1 migrations to the local database;
 *  3. starts `wrangler dev --port 8787 --test-scheduled`;
 *  4. on an empty local database, bootstraps a demo organization and a gateway key through the
 *     API and stores them in `.dev-credentials.json` (gitignored); later starts print them again.
 *
 * `npm run dev -- --offline` also starts the fake upstream (a local stand-in, never used in
 * production) on 127.0.0.1:8790 and points every provider's `<ID>_BASE_URL` at it with a dummy
 * `<ID>_API_KEY` (passed as `--var`, never written to `.dev.vars`).
 * Other flags: `--port N` (default 8787). Ctrl-C stops everything.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapOrganization } from "./bootstrap.mjs";
import { startLocalFakeUpstream } from "./fake-upstream.mjs";
import {
  CREDENTIALS_FILE,
  DEV_VARS,
  FAKE_UPSTREAM_PORT,
  ROOT,
  api,
  parseArgs,
  providerEnvPrefix,
  providerIds,
  randomToken,
  readDevVars,
} from "./lib/local.mjs";

const args = parseArgs(process.argv.slice(2));
const offline = args.offline === true;
const port = typeof args.port === "string" ? Number(args.port) : 8787;
const baseUrl = `http://localhost:${port}`;
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

const log = (/** @type {string} */ msg) => console.log(`\x1b[36m[dev]\x1b[0m ${msg}`);

/** Step 1: `.dev.vars` with the secrets the Worker needs (existing values are kept). */
function ensureDevVars() {
  const current = readDevVars();
  /** @type {string[]} */
  const missing = [];
  if (!current.ENVIRONMENT) missing.push("ENVIRONMENT=development");
  if (!current.ADMIN_TOKEN) missing.push(`ADMIN_TOKEN=${randomToken(24)}`);
  if (!current.KEY_HASH_SECRET) missing.push(`KEY_HASH_SECRET=${randomToken(32)}`);
  if (!existsSync(DEV_VARS)) {
    const header = [
      "# Local secrets for `wrangler dev` (created by `npm run dev`; never commit this file).",
      "# Provider credentials: <ID>_API_KEY and optional <ID>_BASE_URL, e.g.",
      "# OPENAI_API_KEY=sk-...",
      "# ANTHROPIC_API_KEY=sk-ant-...",
      "",
    ];
    writeFileSync(DEV_VARS, [...header, ...missing, ""].join("\n"), { mode: 0o600 });
    log("created .dev.vars with a random ADMIN_TOKEN and KEY_HASH_SECRET");
  } else if (missing.length) {
    const text = readFileSync(DEV_VARS, "utf8");
    writeFileSync(DEV_VARS, `${text}${text.endsWith("\n") || !text ? "" : "\n"}${missing.join("\n")}\n`);
    log(`added ${missing.map((m) => m.split("=")[0]).join(", ")} to .dev.vars`);
  }
  return readDevVars();
}

/** Step 2: local D1 migrations (idempotent). */
function applyMigrations() {
  log("applying D1 migrations to the local database");
  const r = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local"], {
    cwd: ROOT,
    env: { ...childEnv, CI: "true" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error("wrangler d1 migrations apply failed");
}

/** Number of organizations in the local database (-1 when it cannot be read). */
function localOrganizationCount() {
  const r = spawnSync(process.execPath, [WRANGLER, "d1", "execute", "DB", "--local", "--json", "--command", "SELECT COUNT(*) AS n FROM organizations"], {
    cwd: ROOT,
    env: { ...childEnv, CI: "true" },
    encoding: "utf8",
  });
  try {
    const parsed = JSON.parse(r.stdout);
    const n = parsed?.[0]?.results?.[0]?.n;
    return typeof n === "number" ? n : -1;
  } catch {
    return -1;
  }
}

/** `--var` flags for offline mode: every provider at the fake upstream with a dummy key. */
function offlineVars() {
  const upstream = `http://127.0.0.1:${FAKE_UPSTREAM_PORT}`;
  /** @type {string[]} */
  const flags = [];
  for (const id of providerIds()) {
    const prefix = providerEnvPrefix(id);
    flags.push("--var", `${prefix}_BASE_URL:${upstream}/${id}`, "--var", `${prefix}_API_KEY:offline-dummy-key-${id}`);
  }
  // Vertex service-account keys are exchanged at the stand-in's token endpoint.
  flags.push("--var", `GOOGLE_VERTEX_TOKEN_URL:${upstream}/google-oauth/token`);
  // Bedrock signs requests with AWS credentials; dummy ones are enough for the stand-in.
  flags.push("--var", "AWS_BEDROCK_ACCESS_KEY_ID:AKIDOFFLINEDUMMY", "--var", "AWS_BEDROCK_SECRET_ACCESS_KEY:offline-dummy-secret", "--var", "AWS_BEDROCK_REGION:us-east-1");
  return flags;
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Step 3b: wait until `GET /` answers (any status: the Worker is up). */
async function waitForWorker(/** @type {() => boolean} */ exited) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (exited()) throw new Error("wrangler dev exited before the Worker answered");
    try {
      const res = await fetch(`${baseUrl}/?skip=redis`);
      if (res.status === 200 || res.status === 503) return;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(`the Worker did not answer on ${baseUrl} within 120 s`);
}

/**
 * @typedef {object} DevCredentials
 * @property {string} url
 * @property {string} organizationId
 * @property {string} projectId
 * @property {string} ownerEmail
 * @property {string} ownerPassword
 * @property {string} masterKey
 * @property {string} gatewayKey
 * @property {string} gatewayKeyKind
 * @property {string} playgroundKey
 * @property {string} createdAt
 */

/** @returns {DevCredentials | null} */
function readCredentials() {
  if (!existsSync(CREDENTIALS_FILE)) return null;
  try {
    return JSON.parse(readFileSync(CREDENTIALS_FILE, "utf8"));
  } catch {
    return null;
  }
}

/** Step 4: demo organization + a standard gateway key, through the public APIs. */
async function createDemo(/** @type {Record<string, string>} */ vars) {
  const ownerPassword = randomToken(18);
  const ownerEmail = "demo-owner@example.com";
  const boot = await bootstrapOrganization({
    url: baseUrl,
    adminToken: vars.ADMIN_TOKEN ?? "",
    name: "Demo",
    plan: "enterprise",
    email: ownerEmail,
    ownerName: "Demo Owner",
    password: ownerPassword,
    credits: "100",
  });
  let gatewayKey = boot.playgroundKey.token;
  let gatewayKeyKind = "playground";
  const created = await api(`${baseUrl}/v1/master/keys`, {
    method: "POST",
    token: boot.masterKey.token,
    body: { projectId: boot.project.id, description: "Local development" },
  });
  if (created.status === 201 && typeof created.json?.apiKey?.token === "string") {
    gatewayKey = created.json.apiKey.token;
    gatewayKeyKind = "standard";
  } else {
    log(`could not create a standard key (POST /v1/master/keys -> ${created.status}); using the playground key`);
  }
  /** @type {DevCredentials} */
  const creds = {
    url: baseUrl,
    organizationId: boot.organization.id,
    projectId: boot.project.id,
    ownerEmail: boot.owner.email,
    ownerPassword,
    masterKey: boot.masterKey.token,
    gatewayKey,
    gatewayKeyKind,
    playgroundKey: boot.playgroundKey.token,
    createdAt: new Date().toISOString(),
  };
  writeFileSync(CREDENTIALS_FILE, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  chmodSync(CREDENTIALS_FILE, 0o600);
  return creds;
}

/** @param {DevCredentials} creds */
function printCredentials(creds) {
  const lines = [
    "",
    "\x1b[1mSwitchboard is running\x1b[0m" + (offline ? " (offline: providers are the local fake upstream)" : ""),
    `  URL            ${baseUrl}`,
    `  Gateway key    ${creds.gatewayKey}   (${creds.gatewayKeyKind}, project ${creds.projectId})`,
    `  Master key     ${creds.masterKey}`,
    `  Owner sign-in  ${creds.ownerEmail} / ${creds.ownerPassword}`,
    `  (stored in .dev-credentials.json)`,
    "",
    "  Try:",
    `  curl ${baseUrl}/v1/chat/completions -H "Authorization: Bearer ${creds.gatewayKey}" \\`,
    `    -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
    "",
  ];
  console.log(lines.join("\n"));
}

async function main() {
  const vars = ensureDevVars();
  applyMigrations();
  const emptyDb = localOrganizationCount() === 0;

  /** @type {{ close: () => Promise<void> } | null} */
  let fake = null;
  if (offline) fake = await startLocalFakeUpstream(FAKE_UPSTREAM_PORT);

  const wranglerArgs = [WRANGLER, "dev", "--port", String(port), "--test-scheduled", ...(offline ? offlineVars() : [])];
  log(`starting wrangler dev on ${baseUrl}`);
  const child = spawn(process.execPath, wranglerArgs, { cwd: ROOT, env: childEnv, stdio: "inherit" });
  let exited = false;
  let stopping = false;
  const stop = async (/** @type {number} */ code) => {
    if (stopping) return;
    stopping = true;
    if (!exited) child.kill("SIGTERM");
    if (fake) await fake.close();
    // Give wrangler a moment to stop workerd, then leave.
    const deadline = Date.now() + 5000;
    while (!exited && Date.now() < deadline) await sleep(100);
    if (!exited) child.kill("SIGKILL");
    process.exit(code);
  };
  child.on("exit", (code) => {
    exited = true;
    if (!stopping) void stop(code ?? 1);
  });
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));

  try {
    await waitForWorker(() => exited);
    let creds = readCredentials();
    if (creds) {
      const check = await api(`${baseUrl}/v1/master/organization`, { token: creds.masterKey });
      if (check.status !== 200) {
        log(".dev-credentials.json does not match the local database (it was reset?); ignoring it");
        creds = null;
      }
    }
    if (!creds) {
      if (emptyDb) {
        log("empty local database: creating a demo organization");
        creds = await createDemo(vars);
      } else {
        log("the local database already has organizations but no usable .dev-credentials.json:");
        log("run `npm run bootstrap` for a new organization, or delete .wrangler/state for a fresh start");
      }
    }
    if (creds) printCredentials(creds);
  } catch (err) {
    console.error(`\x1b[31m[dev]\x1b[0m ${err instanceof Error ? err.message : String(err)}`);
    if (exited) await stop(1);
  }
}

main().catch((err) => {
  console.error(`\x1b[31m[dev]\x1b[0m ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

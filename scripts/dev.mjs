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
 * With no provider credential in `.dev.vars` (or with `--offline`) it also starts the local
 * stand-in upstream (test/fake-upstream, never used in production) on a free port and points every
 * provider's `<ID>_BASE_URL` at it with a key it accepts (passed as `--var`, never written to
 * `.dev.vars`). The scheduled handler runs every minute through `GET /__scheduled`, as the Cron
 * Triggers do in production. A busy port is one line and exit code 2, before anything starts.
 * Other flags: `--port N` (default 8787); `--persist-to DIR` keeps the local state (D1, Durable
 * Objects, KV, R2) in DIR instead of `.wrangler/state` and the credentials in
 * DIR/.dev-credentials.json (used by `npm run docs:check`); `--inspector-port N` (wrangler's
 * DevTools port, default 9229); `--help`. An unknown flag is one line and exit code 2, before
 * anything is written. wrangler's startup chatter (bindings table, notices) is held back and only
 * shown when the start fails; the startup log is the URL, the credentials file and the mode.
 * Ctrl-C stops everything.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { bootstrapOrganization } from "./bootstrap.mjs";
import { writeStaticModule } from "./static-files.mjs";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { STAND_IN_NOTICE, cronMatches, cronsOf, hasProviderCredential, portIsFree, standInVars } from "./lib/dev-plan.mjs";
import { CREDENTIALS_FILE as DEFAULT_CREDENTIALS_FILE, DEV_VARS, ROOT, api, parseArgs, randomToken, readDevVars } from "./lib/local.mjs";

const USAGE = `Usage: npm run dev [-- options]

Starts Switchboard locally on wrangler dev, with a demo organization on a fresh database.

Options:
  --port N             port of the gateway (default 8787)
  --inspector-port N   port of the DevTools inspector (default 9229)
  --persist-to DIR     keep the local state and .dev-credentials.json in DIR
  --offline            use the local stand-in upstream even when provider keys are set
  --help               show this help`;

/** Flags and whether they take a value. */
const FLAGS = { port: true, "inspector-port": true, "persist-to": true, offline: false, help: false };
const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i] ?? "";
  const name = arg.startsWith("--") ? arg.slice(2).split("=")[0] ?? "" : null;
  if (name !== null && Object.hasOwn(FLAGS, name)) {
    if (FLAGS[/** @type {keyof typeof FLAGS} */ (name)] && !arg.includes("=")) i++;
    continue;
  }
  console.error(`[dev] unknown option '${arg}'; see npm run dev -- --help`);
  process.exit(2);
}
const args = parseArgs(argv);
const inspectorPort = typeof args["inspector-port"] === "string" ? Number(args["inspector-port"]) : null;
const persistTo = typeof args["persist-to"] === "string" ? resolve(args["persist-to"]) : null;
const persistFlags = persistTo ? ["--persist-to", persistTo] : [];
const CREDENTIALS_FILE = persistTo ? join(persistTo, ".dev-credentials.json") : DEFAULT_CREDENTIALS_FILE;
const port = typeof args.port === "string" ? Number(args.port) : 8787;
/** Set in main(): true with `--offline` or when no provider credential is configured. */
let offline = args.offline === true;
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
  const r = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", ...persistFlags], {
    cwd: ROOT,
    env: { ...childEnv, CI: "true" },
    encoding: "utf8",
  });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout}${r.stderr}`);
    throw new Error("wrangler d1 migrations apply failed");
  }
}

/** Number of organizations in the local database (-1 when it cannot be read). */
function localOrganizationCount() {
  const r = spawnSync(process.execPath, [WRANGLER, "d1", "execute", "DB", "--local", ...persistFlags, "--json", "--command", "SELECT COUNT(*) AS n FROM organizations"], {
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
    "\x1b[1mSwitchboard is running\x1b[0m",
    `  URL            ${baseUrl}   (dashboard ${baseUrl}/dashboard, API docs ${baseUrl}/docs)`,
    `  Mode           ${offline ? "offline: providers are the local stand-in upstream (no real model answers)" : "providers from the credentials in .dev.vars"}`,
    `  Crons          the scheduled handler runs every minute (key expiry, usage aggregation, retention)`,
    `  Gateway key    ${creds.gatewayKey}   (${creds.gatewayKeyKind}, project ${creds.projectId})`,
    `  Master key     ${creds.masterKey}`,
    `  Owner sign-in  ${creds.ownerEmail} / ${creds.ownerPassword}`,
    `  (stored in ${persistTo ? CREDENTIALS_FILE : ".dev-credentials.json"})`,
    "",
    "  Try:",
    `  curl ${baseUrl}/v1/chat/completions -H "Authorization: Bearer ${creds.gatewayKey}" \\`,
    `    -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
    "",
  ];
  console.log(lines.join("\n"));
}

/**
 * Calls the scheduled handler at the start of every UTC minute with each cron of wrangler.jsonc that
 * matches it, as Cron Triggers do in production (wrangler dev does not fire them by itself).
 * @returns {() => void} stops the timer
 */
function driveCrons() {
  const crons = cronsOf(readFileSync(join(ROOT, "wrangler.jsonc"), "utf8"));
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const tick = async () => {
    const at = new Date();
    for (const cron of crons.filter((c) => cronMatches(c, at))) {
      try {
        const res = await fetch(`${baseUrl}/__scheduled?cron=${encodeURIComponent(cron)}`);
        await res.arrayBuffer();
        if (!res.ok) log(`scheduled handler (${cron}) answered ${res.status}`);
      } catch {
        // the Worker is restarting (file change); the next minute runs again
      }
    }
    schedule();
  };
  const schedule = () => {
    timer = setTimeout(() => void tick(), 60_000 - (Date.now() % 60_000) + 200);
    timer.unref();
  };
  schedule();
  return () => clearTimeout(timer);
}

async function main() {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`[dev] --port must be a port number (1-65535), got ${String(args.port)}`);
    process.exit(2);
  }
  if (inspectorPort !== null && (!Number.isInteger(inspectorPort) || inspectorPort < 1 || inspectorPort > 65535)) {
    console.error(`[dev] --inspector-port must be a port number (1-65535), got ${String(args["inspector-port"])}`);
    process.exit(2);
  }
  // Before anything else: a second `npm run dev` (or any other server on the port) must not reach
  // migrations, wrangler or the bootstrap of the instance that already runs there.
  if (!(await portIsFree(port))) {
    console.error(`[dev] port ${port} is already in use (another \`npm run dev\`?); stop it or pick another port: npm run dev -- --port ${port + 1}`);
    process.exit(2);
  }
  // The dashboard's static files as the Worker serves them, from public/ as it is now.
  writeStaticModule();
  const vars = ensureDevVars();
  if (!offline && !hasProviderCredential(vars)) {
    offline = true;
    log(STAND_IN_NOTICE);
  }
  // A state directory without a local D1 yet is empty for sure: no second wrangler start to count
  // (each one costs seconds, tens of them on a loaded machine; `npm run soak` starts fresh ones).
  const freshDb = !existsSync(join(persistTo ?? join(ROOT, ".wrangler", "state"), "v3", "d1"));
  applyMigrations();
  const emptyDb = freshDb || localOrganizationCount() === 0;

  /** @type {{ url: string, close: () => Promise<void> } | null} */
  let fake = null;
  if (offline) fake = await startFakeUpstream({ port: 0, host: "127.0.0.1" });

  const wranglerArgs = [
    WRANGLER, "dev", "--port", String(port), "--test-scheduled", ...(inspectorPort ? ["--inspector-port", String(inspectorPort)] : []),
    // With the bench instruments (DO_LATENCY_MS and the like in .dev.vars); `wrangler deploy` leaves them out.
    "--define", "__BENCH_INSTRUMENTS__:true",
    ...persistFlags, ...(fake ? standInVars(fake.url) : []),
    // Invitation e-mails carry a link only with PUBLIC_URL (they have no request to take an origin from).
    ...(vars.PUBLIC_URL ? [] : ["--var", `PUBLIC_URL:${baseUrl}`]),
  ];
  log(`starting wrangler dev on ${baseUrl}`);
  const child = spawn(process.execPath, wranglerArgs, { cwd: ROOT, env: childEnv, stdio: ["inherit", "pipe", "pipe"] });
  // Startup chatter is held until the Worker answers (shown only if the start fails); then wrangler's
  // output (request lines, Worker logs, reloads) passes through.
  /** @type {string[] | null} */
  let held = [];
  const relay = (/** @type {NodeJS.WriteStream} */ to) => (/** @type {Buffer} */ chunk) => {
    if (held) held.push(chunk.toString());
    else to.write(chunk);
  };
  child.stdout.on("data", relay(process.stdout));
  child.stderr.on("data", relay(process.stderr));
  const release = (/** @type {boolean} */ show) => {
    if (show && held) process.stderr.write(held.join(""));
    held = null;
  };
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
    await waitForWorker(() => exited).catch((err) => {
      release(true);
      throw err;
    });
    release(false);
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
    driveCrons();
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

#!/usr/bin/env node
// @ts-check
/**
 * `npm run setup:cloudflare` — from a clone to a deployed Switchboard on your Cloudflare account,
 * idempotently (run it again after a failure or a change: existing resources and secrets are kept).
 *
 *  1. checks that wrangler is logged in (`wrangler whoami`);
 *  2. D1 database `switchboard`: reuses it or `wrangler d1 create`;
 *  3. KV namespace `switchboard-cache`: reuses it or `wrangler kv namespace create`;
 *  4. R2 buckets `switchboard-uploads` and `switchboard-logs` (request records, with a lifecycle rule
 *     expiring `logs/` after REQUEST_LOG_RETENTION_DAYS), and the queues `switchboard-logs` and its
 *     dead-letter queue `switchboard-logs-dlq`: reuses them or creates them;
 *  5. writes the D1 and KV ids into wrangler.jsonc (replacing the placeholders), and the LOGS queue
 *     and LOGS_BUCKET bindings when the file predates them;
 *  6. `wrangler d1 migrations apply DB --remote`;
 *  7. secrets: KEY_HASH_SECRET and ADMIN_TOKEN generated once (never rotated by a re-run), provider
 *     keys (OPENAI_API_KEY, ...) taken from the environment or asked for; `wrangler secret put`;
 *  8. `wrangler deploy --minify`;
 *  9. bootstraps the first organization through `POST /v1/admin/organizations` on the deployed URL
 *     and stores its keys in `.deploy-credentials.json` (gitignored, mode 0600); skipped when done.
 *
 *   npm run setup:cloudflare -- [--dry-run] [--config wrangler.jsonc] [--url https://...]
 *                               [--org-name Acme] [--email owner@acme.example] [--yes]
 *
 * `--dry-run` prints every command and file change instead of running it and walks through all
 * steps offline with made-up ids (no account needed); scripts/test/setup-cloudflare.test.mjs does.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import { bootstrapOrganization } from "./bootstrap.mjs";
import { ROOT, parseArgs, providerEnvPrefix, providerIds, randomToken } from "./lib/local.mjs";

export const D1_NAME = "switchboard";
export const KV_TITLE = "switchboard-cache";
export const R2_BUCKET = "switchboard-uploads";
export const LOGS_BUCKET = "switchboard-logs";
export const LOGS_QUEUE = "switchboard-logs";
/** Outbound deliveries (OpenTelemetry spans, webhook events). */
export const DELIVERIES_QUEUE = "switchboard-deliveries";
export const LOGS_DLQ = "switchboard-logs-dlq";
const PLACEHOLDER_D1 = "00000000-0000-0000-0000-000000000000";
const PLACEHOLDER_KV = "00000000000000000000000000000000";

/** `"database_id": "<uuid>"` from `wrangler d1 create` / `d1 info` output. @param {string} out */
export const parseD1Id = (out) => /"?database_id"?\s*[:=]\s*"([0-9a-f-]{36})"/i.exec(out)?.[1] ?? null;
/** `"id": "<32 hex>"` from `wrangler kv namespace create` output. @param {string} out */
export const parseKvId = (out) => /"?id"?\s*[:=]\s*"([0-9a-f]{32})"/i.exec(out)?.[1] ?? null;
/** The `https://...workers.dev` (or custom domain) URL from `wrangler deploy` output. @param {string} out */
export const parseDeployUrl = (out) => /(https:\/\/[^\s]+\.workers\.dev)\b/.exec(out)?.[1] ?? null;

/**
 * Writes the ids into wrangler.jsonc text (comments kept). Idempotent: the same ids give the same text.
 * @param {string} jsonc
 * @param {{ d1?: string | null, kv?: string | null }} ids
 */
export function withResourceIds(jsonc, ids) {
  let out = jsonc;
  if (ids.d1) out = out.replace(/("database_id"\s*:\s*)"[^"]*"/, `$1"${ids.d1}"`);
  if (ids.kv) out = out.replace(/("kv_namespaces"\s*:\s*\[\s*\{[^}]*?"id"\s*:\s*)"[^"]*"/, `$1"${ids.kv}"`);
  return out;
}

/**
 * Adds the request-log bindings (LOGS_BUCKET, the LOGS queue with its consumer and dead-letter
 * queue) to a wrangler.jsonc that predates them; a config that has them comes back unchanged.
 * @param {string} jsonc
 */
export function withLogBindings(jsonc) {
  let out = jsonc;
  if (!/"binding"\s*:\s*"LOGS_BUCKET"/.test(out)) {
    out = out.replace(/"r2_buckets"\s*:\s*\[/, (m) => `${m}\n    { "binding": "LOGS_BUCKET", "bucket_name": "${LOGS_BUCKET}" },`);
  }
  if (!/"queues"\s*:/.test(out)) {
    const block = `  "queues": {
    "producers": [{ "binding": "LOGS", "queue": "${LOGS_QUEUE}" }],
    "consumers": [
      { "queue": "${LOGS_QUEUE}", "max_batch_size": 100, "max_batch_timeout": 5, "max_retries": 10, "retry_delay": 30, "dead_letter_queue": "${LOGS_DLQ}" }
    ]
  },
`;
    out = out.replace(/^(\s*)"triggers"\s*:/m, (m) => `${block}${m}`);
  }
  return out;
}

/** Days of REQUEST_LOG_RETENTION_DAYS in wrangler.jsonc's vars (30 when absent). @param {string} jsonc */
export const retentionDaysOf = (jsonc) => Number(/"REQUEST_LOG_RETENTION_DAYS"\s*:\s*"(\d+)"/.exec(jsonc)?.[1] ?? 30);

/** @param {string} jsonc */
export function currentIds(jsonc) {
  const d1 = /"database_id"\s*:\s*"([^"]*)"/.exec(jsonc)?.[1] ?? null;
  const kv = /"kv_namespaces"\s*:\s*\[\s*\{[^}]*?"id"\s*:\s*"([^"]*)"/.exec(jsonc)?.[1] ?? null;
  return { d1: d1 && d1 !== PLACEHOLDER_D1 ? d1 : null, kv: kv && kv !== PLACEHOLDER_KV ? kv : null };
}

/**
 * What `--dry-run` pretends wrangler answered, so every step runs offline.
 * @param {string[]} args
 */
function dryRunOutput(args) {
  const cmd = args.slice(0, 3).join(" ");
  if (cmd.startsWith("whoami")) return "You are logged in (dry run).";
  if (cmd.startsWith("d1 list")) return "[]";
  if (cmd.startsWith("d1 create")) return `{ "d1_databases": [{ "binding": "DB", "database_name": "${D1_NAME}", "database_id": "d1d1d1d1-0000-4000-8000-000000000001" }] }`;
  if (cmd.startsWith("kv namespace list")) return "[]";
  if (cmd.startsWith("kv namespace create")) return `{ "kv_namespaces": [{ "binding": "CACHE", "id": "0123456789abcdef0123456789abcdef" }] }`;
  if (cmd.startsWith("r2 bucket list")) return "";
  if (cmd.startsWith("r2 bucket lifecycle")) return "";
  if (cmd.startsWith("queues list")) return "";
  if (cmd.startsWith("secret list")) return "[]";
  if (cmd.startsWith("deploy")) return "Deployed switchboard triggers\n  https://switchboard.example.workers.dev";
  return "";
}

/**
 * @param {{ dryRun: boolean, cwd: string, log: (line: string) => void }} ctx
 * @returns {(args: string[], opts?: { input?: string, allowFailure?: boolean, show?: boolean }) => { ok: boolean, out: string }}
 */
function wranglerRunner(ctx) {
  const bin = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  return (args, opts = {}) => {
    const shown = `$ npx wrangler ${args.join(" ")}${opts.input !== undefined ? " (value on stdin)" : ""}`;
    if (ctx.dryRun) {
      ctx.log(shown);
      return { ok: true, out: dryRunOutput(args) };
    }
    if (opts.show !== false) ctx.log(shown);
    const r = spawnSync(process.execPath, [bin, ...args], {
      cwd: ctx.cwd,
      input: opts.input,
      encoding: "utf8",
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    if (r.status !== 0 && !opts.allowFailure) throw new Error(`wrangler ${args.slice(0, 3).join(" ")} failed:\n${out.trim()}`);
    return { ok: r.status === 0, out };
  };
}

/** @param {string} text @returns {any} */
const jsonOr = (text, fallback = /** @type {any} */ ([])) => {
  const start = text.search(/[[{]/);
  try {
    return start >= 0 ? JSON.parse(text.slice(start)) : fallback;
  } catch {
    return fallback;
  }
};

/**
 * @param {{ dryRun?: boolean, config?: string, url?: string, orgName?: string, email?: string, yes?: boolean,
 *           log?: (line: string) => void, ask?: (question: string) => Promise<string>, env?: Record<string, string | undefined> }} opts
 */
export async function setupCloudflare(opts = {}) {
  const dryRun = opts.dryRun === true;
  const log = opts.log ?? ((line) => console.log(line));
  const env = opts.env ?? process.env;
  const configPath = resolve(opts.config ?? join(ROOT, "wrangler.jsonc"));
  const cwd = dirname(configPath);
  const stateFile = join(cwd, ".deploy-credentials.json");
  const wrangler = wranglerRunner({ dryRun, cwd, log });
  const step = (/** @type {number} */ n, /** @type {string} */ title) => log(`\n[${n}/9] ${title}`);
  /** @type {Record<string, any>} */
  const state = existsSync(stateFile) ? jsonOr(readFileSync(stateFile, "utf8"), {}) : {};
  const saveState = () => {
    if (dryRun) return log(`(dry run) would write ${stateFile} (mode 0600)`);
    writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    chmodSync(stateFile, 0o600);
  };

  step(1, "wrangler login");
  const who = wrangler(["whoami"], { allowFailure: true });
  if (!who.ok || /not authenticated|You are not logged in/i.test(who.out)) {
    throw new Error("wrangler is not logged in: run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run this again");
  }

  const original = readFileSync(configPath, "utf8");
  const known = currentIds(original);

  /**
   * The id in wrangler.jsonc, else an existing resource's (found by name in the list), else a new one's.
   * @param {{ what: string, known: string | null, list: string[], pick: (item: any) => string | null, create: string[], parse: (out: string) => string | null }} r
   */
  const ensure = (r) => {
    if (r.known) {
      log(`wrangler.jsonc already names ${r.what} ${r.known}`);
      return r.known;
    }
    const list = jsonOr(wrangler(r.list).out);
    const found = (Array.isArray(list) ? list : []).map(r.pick).find(Boolean) ?? null;
    if (found) log(`reusing the existing ${r.what} ${found}`);
    const id = found ?? r.parse(wrangler(r.create).out);
    if (!id) throw new Error(`could not read the ${r.what} id from \`wrangler ${r.create.join(" ")}\``);
    return id;
  };

  step(2, `D1 database '${D1_NAME}'`);
  const d1 = ensure({ what: "database", known: known.d1, list: ["d1", "list", "--json"], pick: (db) => (db?.name === D1_NAME ? db.uuid : null), create: ["d1", "create", D1_NAME], parse: parseD1Id });

  step(3, `KV namespace '${KV_TITLE}'`);
  const kv = ensure({ what: "namespace", known: known.kv, list: ["kv", "namespace", "list"], pick: (ns) => (ns?.title === KV_TITLE ? ns.id : null), create: ["kv", "namespace", "create", KV_TITLE], parse: parseKvId });

  step(4, `R2 buckets '${R2_BUCKET}', '${LOGS_BUCKET}' and the queue '${LOGS_QUEUE}' (dead letters: '${LOGS_DLQ}')`);
  const named = (/** @type {string} */ list, /** @type {string} */ name) => new RegExp(`(^|[\\s:│|])${name}($|[\\s│|])`, "m").test(list);
  const buckets = wrangler(["r2", "bucket", "list"]).out;
  for (const bucket of [R2_BUCKET, LOGS_BUCKET]) {
    if (named(buckets, bucket)) log(`the bucket ${bucket} exists`);
    else wrangler(["r2", "bucket", "create", bucket]);
  }
  const rules = wrangler(["r2", "bucket", "lifecycle", "list", LOGS_BUCKET], { allowFailure: true }).out;
  if (named(rules, "expire-logs")) log("the request records' lifecycle rule exists");
  else wrangler(["r2", "bucket", "lifecycle", "add", LOGS_BUCKET, "expire-logs", "logs/", "--expire-days", String(retentionDaysOf(original)), "--force"]);
  // Request bodies (projects with logBodies) expire with the records.
  if (named(rules, "expire-bodies")) log("the request bodies' lifecycle rule exists");
  else wrangler(["r2", "bucket", "lifecycle", "add", LOGS_BUCKET, "expire-bodies", "bodies/", "--expire-days", String(retentionDaysOf(original)), "--force"]);
  const queues = wrangler(["queues", "list"]).out;
  for (const queue of [LOGS_DLQ, LOGS_QUEUE, DELIVERIES_QUEUE]) {
    if (named(queues, queue)) log(`the queue ${queue} exists`);
    else wrangler(["queues", "create", queue]);
  }

  step(5, "ids and bindings into wrangler.jsonc");
  const updated = withLogBindings(withResourceIds(original, { d1, kv }));
  if (updated === original) log("wrangler.jsonc is up to date");
  else if (dryRun) log(`(dry run) would set database_id=${d1} and the CACHE namespace id=${kv} in ${configPath}`);
  else {
    writeFileSync(configPath, updated);
    log(`wrote database_id=${d1} and the CACHE namespace id=${kv} into ${configPath} (commit it)`);
  }

  step(6, "D1 migrations (remote)");
  wrangler(["d1", "migrations", "apply", "DB", "--remote"]);

  step(7, "secrets");
  const existing = new Set((/** @type {any[]} */ (jsonOr(wrangler(["secret", "list", "--format", "json"], { allowFailure: true }).out))).map((s) => s?.name));
  /** @type {Array<[string, string]>} */
  const toPut = [];
  if (!existing.has("KEY_HASH_SECRET")) toPut.push(["KEY_HASH_SECRET", env.KEY_HASH_SECRET || randomToken(32)]);
  else log("KEY_HASH_SECRET is set (kept: changing it invalidates every key)");
  if (!existing.has("ADMIN_TOKEN")) {
    state.adminToken = env.ADMIN_TOKEN || state.adminToken || randomToken(24);
    toPut.push(["ADMIN_TOKEN", state.adminToken]);
  } else log("ADMIN_TOKEN is set (kept)");
  for (const id of providerIds()) {
    const name = `${providerEnvPrefix(id)}_API_KEY`;
    if (existing.has(name)) continue;
    const value = env[name] || (opts.ask && !opts.yes ? (await opts.ask(`${name} (Enter to skip): `)).trim() : "");
    if (value) toPut.push([name, value]);
  }
  for (const [name, value] of toPut) wrangler(["secret", "put", name], { input: value });
  if (toPut.some(([n]) => n === "ADMIN_TOKEN")) saveState();
  if (!toPut.some(([n]) => n.endsWith("_API_KEY")) && ![...existing].some((n) => String(n).endsWith("_API_KEY"))) {
    log("no provider key set: organizations can still bring their own (/v1/master/provider-keys)");
  }

  step(8, "deploy (minified)");
  const deployed = wrangler(["deploy", "--minify"]);
  const url = opts.url ?? parseDeployUrl(deployed.out);
  if (!url) throw new Error("could not read the Worker's URL from `wrangler deploy`; pass --url https://...");
  log(`deployed at ${url}`);

  step(9, "first organization");
  if (state.organizationId) {
    log(`already bootstrapped: organization ${state.organizationId} (keys in ${stateFile})`);
  } else if (!state.adminToken) {
    log("ADMIN_TOKEN was set before this script managed it: bootstrap with `npm run bootstrap -- --url " + url + "` and ADMIN_TOKEN in the environment");
  } else if (dryRun) {
    log(`(dry run) would POST ${url}/v1/admin/organizations and store the master key in ${stateFile}`);
  } else {
    const password = randomToken(18);
    const boot = await bootstrapOrganization({
      url,
      adminToken: state.adminToken,
      name: opts.orgName ?? "My organization",
      plan: "enterprise",
      email: opts.email ?? env.SWITCHBOARD_OWNER_EMAIL ?? "owner@example.com",
      ownerName: "Owner",
      password,
    });
    Object.assign(state, {
      url,
      organizationId: boot.organization.id,
      ownerEmail: boot.owner.email,
      ownerPassword: password,
      masterKey: boot.masterKey.token,
      playgroundKey: boot.playgroundKey.token,
    });
    saveState();
    log(`organization ${boot.organization.id} created; owner ${boot.owner.email}; keys in ${stateFile}`);
  }
  log("\ndone. Next: docs/deployment.md (custom domain, Email Routing, Workers Logs).");
  return { d1, kv, url };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = parseArgs(process.argv.slice(2));
  const str = (/** @type {string} */ k) => (typeof args[k] === "string" ? /** @type {string} */ (args[k]) : undefined);
  const rl = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stdout }) : null;
  setupCloudflare({
    dryRun: args["dry-run"] === true,
    config: str("config"),
    url: str("url"),
    orgName: str("org-name"),
    email: str("email"),
    yes: args.yes === true,
    ask: rl ? (q) => rl.question(q) : undefined,
  })
    .then(() => rl?.close())
    .catch((err) => {
      rl?.close();
      console.error(`[setup:cloudflare] ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
}

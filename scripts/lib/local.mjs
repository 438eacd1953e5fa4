// @ts-check
/**
 * Helpers shared by the local scripts (dev, bootstrap, fake-upstream). Node built-ins only.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEV_VARS = join(ROOT, ".dev.vars");
export const CREDENTIALS_FILE = join(ROOT, ".dev-credentials.json");
export const DEFAULT_URL = "http://localhost:8787";
export const FAKE_UPSTREAM_PORT = 8790;

/**
 * Parses a dotenv-style `.dev.vars` (KEY=value, `#` comments, optional quotes).
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseDevVars(text) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || !m[1]) continue;
    let value = m[2] ?? "";
    const quoted = /^(["'])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2] ?? "";
    out[m[1]] = value;
  }
  return out;
}

/** @returns {Record<string, string>} `.dev.vars` of the checkout, or `{}` when there is none. */
export function readDevVars() {
  return existsSync(DEV_VARS) ? parseDevVars(readFileSync(DEV_VARS, "utf8")) : {};
}

/** @param {number} bytes */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString("base64url");

/**
 * Provider ids, read from the catalogue source so there is one list (src/catalog/types.ts).
 * @returns {string[]}
 */
export function providerIds() {
  const source = readFileSync(join(ROOT, "src", "catalog", "types.ts"), "utf8");
  const m = /export const PROVIDER_IDS = \[([\s\S]*?)\] as const/.exec(source);
  const ids = m && m[1] ? [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1] ?? "") : [];
  if (!ids.length) throw new Error("could not read PROVIDER_IDS from src/catalog/types.ts");
  return ids;
}

/** `google-ai-studio` -> `GOOGLE_AI_STUDIO` (contract section 1). @param {string} id */
export const providerEnvPrefix = (id) => id.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * Minimal `--flag value` / `--flag=value` / `--switch` parser.
 * @param {string[]} argv
 * @returns {Record<string, string | true>}
 */
export function parseArgs(argv) {
  /** @type {Record<string, string | true>} */
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!arg.startsWith("--")) continue;
    const eq = arg.indexOf("=");
    if (eq > 0) {
      out[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith("--")) {
        out[arg.slice(2)] = next;
        i++;
      } else {
        out[arg.slice(2)] = true;
      }
    }
  }
  return out;
}

/**
 * JSON request against a running Switchboard; throws with the error envelope's message.
 * @param {string} url
 * @param {{ method?: string, token?: string, body?: unknown }} [opts]
 * @returns {Promise<{ status: number, json: any }>}
 */
export async function api(url, opts = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, { method: opts.method ?? "GET", headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { raw: text };
  }
  return { status: res.status, json };
}

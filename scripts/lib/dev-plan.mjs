// @ts-check
/**
 * Decisions `npm run dev` takes before it starts anything, kept pure so scripts/test/ can check them:
 * whether a provider credential is configured, the `--var` flags that point every provider at the
 * local stand-in, which crons are due at a given minute, and whether a port is free.
 */
import net from "node:net";
import { providerEnvPrefix, providerIds } from "./local.mjs";

/** The one line printed when `npm run dev` falls back to the stand-in because no key is configured. */
export const STAND_IN_NOTICE =
  "no provider keys found: serving from the local stand-in; add OPENAI_API_KEY=... to .dev.vars to use the real provider";

/**
 * True when `.dev.vars` holds a credential for at least one provider (`<ID>_API_KEY`, or Bedrock's
 * AWS access key pair).
 * @param {Record<string, string>} vars
 * @param {string[]} [ids]
 */
export function hasProviderCredential(vars, ids = providerIds()) {
  const set = (/** @type {string} */ name) => typeof vars[name] === "string" && vars[name].trim().length > 0;
  if (set("AWS_BEDROCK_ACCESS_KEY_ID") && set("AWS_BEDROCK_SECRET_ACCESS_KEY")) return true;
  return ids.some((id) => set(`${providerEnvPrefix(id)}_API_KEY`));
}

/**
 * Operator key the stand-in accepts for provider `id`. The fake upstream (test/fake-upstream)
 * checks exactly these on its image and video endpoints, the same values the test suite passes
 * (vitest.config.ts), so every endpoint answers in offline mode.
 * @param {string} id
 */
export const standInKey = (id) => `test-operator-key-${id}`;

/**
 * `--var` flags for `wrangler dev`: every provider at the stand-in with a key it accepts. Passed on
 * the command line, never written to `.dev.vars`.
 * @param {string} upstream e.g. `http://127.0.0.1:39123`
 * @param {string[]} [ids]
 */
export function standInVars(upstream, ids = providerIds()) {
  /** @type {string[]} */
  const flags = [];
  for (const id of ids) {
    const prefix = providerEnvPrefix(id);
    flags.push("--var", `${prefix}_BASE_URL:${upstream}/${id}`, "--var", `${prefix}_API_KEY:${standInKey(id)}`);
  }
  // Vertex service-account keys are exchanged at the stand-in's token endpoint.
  flags.push("--var", `GOOGLE_VERTEX_TOKEN_URL:${upstream}/google-oauth/token`);
  // Bedrock signs requests with AWS credentials; dummy ones are enough for the stand-in.
  flags.push(
    "--var", "AWS_BEDROCK_ACCESS_KEY_ID:AKIDOFFLINEDUMMY",
    "--var", "AWS_BEDROCK_SECRET_ACCESS_KEY:offline-dummy-secret",
    "--var", "AWS_BEDROCK_REGION:us-east-1",
  );
  return flags;
}

/**
 * Does a 5-field cron expression with only `*` and plain numbers match this UTC minute? Enough for
 * the crons in wrangler.jsonc (`* * * * *`, `17 3 * * *`); anything fancier never matches.
 * @param {string} cron
 * @param {Date} at
 */
export function cronMatches(cron, at) {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return false;
  const actual = [at.getUTCMinutes(), at.getUTCHours(), at.getUTCDate(), at.getUTCMonth() + 1, at.getUTCDay()];
  return fields.every((f, i) => f === "*" || (/^\d+$/.test(f) && Number(f) === actual[i]));
}

/**
 * Crons from wrangler.jsonc's `triggers.crons` (comments allowed in the file).
 * @param {string} jsonc
 * @returns {string[]}
 */
export function cronsOf(jsonc) {
  const m = /"crons"\s*:\s*\[([^\]]*)\]/.exec(jsonc);
  return m && m[1] ? [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1] ?? "") : [];
}

/**
 * Resolves to true when nothing listens on `port` (checked on 127.0.0.1 and ::1, where wrangler
 * dev's `localhost` may bind).
 * @param {number} port
 */
export async function portIsFree(port) {
  for (const host of ["127.0.0.1", "::1"]) {
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once("error", (/** @type {NodeJS.ErrnoException} */ err) => resolve(err.code === "EADDRNOTAVAIL" || err.code === "EAFNOSUPPORT"));
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

#!/usr/bin/env node
// @ts-check
/**
 * `npm run bootstrap` — creates an organization on a running Switchboard through the operator API
 * (contract section 3, `POST /v1/admin/organizations`) and prints its master key.
 *
 *   npm run bootstrap -- [--url http://localhost:8787] [--name Acme] [--plan free|pro|enterprise]
 *                        [--email owner@acme.test] [--owner-name Olive] [--password ...]
 *                        [--credits 25] [--json]
 *
 * ADMIN_TOKEN comes from the environment, else from `.dev.vars`. Without --password a random one
 * is generated and printed.
 */
import { fileURLToPath } from "node:url";
import { DEFAULT_URL, api, parseArgs, randomToken, readDevVars } from "./lib/local.mjs";

/**
 * @param {{ url: string, adminToken: string, name: string, plan: string, email: string, ownerName: string, password: string, credits?: string }} input
 * @returns {Promise<any>} the 201 body of the bootstrap API
 */
export async function bootstrapOrganization(input) {
  const body = { name: input.name, plan: input.plan, owner: { email: input.email, name: input.ownerName, password: input.password } };
  if (input.credits !== undefined) Object.assign(body, { credits: input.credits });
  const { status, json } = await api(`${input.url.replace(/\/+$/, "")}/v1/admin/organizations`, { method: "POST", token: input.adminToken, body });
  if (status !== 201) {
    const message = json?.error?.message ?? JSON.stringify(json);
    throw new Error(`bootstrap failed (${status}): ${message}${status === 404 ? " — is ADMIN_TOKEN set for the Worker?" : ""}`);
  }
  return json;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const str = (/** @type {string} */ k, /** @type {string} */ d) => (typeof args[k] === "string" ? /** @type {string} */ (args[k]) : d);
  if (args.help) {
    console.log("usage: npm run bootstrap -- [--url URL] [--name NAME] [--plan free|pro|enterprise] [--email E] [--owner-name N] [--password P] [--credits USD] [--json]");
    return;
  }
  const adminToken = process.env.ADMIN_TOKEN || readDevVars().ADMIN_TOKEN;
  if (!adminToken) throw new Error("ADMIN_TOKEN is not set (environment or .dev.vars)");
  const generated = typeof args.password !== "string";
  const input = {
    url: str("url", DEFAULT_URL),
    adminToken,
    name: str("name", "Acme"),
    plan: str("plan", "free"),
    email: str("email", `owner-${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, "x")}@example.com`),
    ownerName: str("owner-name", "Owner"),
    password: str("password", randomToken(18)),
    credits: typeof args.credits === "string" ? args.credits : undefined,
  };
  const result = await bootstrapOrganization(input);
  if (args.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(`Organization ${result.organization.id} (${result.organization.name}, plan ${result.organization.plan})`);
  console.log(`Owner          ${result.owner.email}${generated ? `  password: ${input.password}` : ""}`);
  console.log(`Project        ${result.project.id}`);
  console.log(`Playground key ${result.playgroundKey.token}`);
  console.log(`Master key     ${result.masterKey.token}`);
  console.log("\nThe keys are shown once; store them now.");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

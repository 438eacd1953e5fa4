#!/usr/bin/env node
// @ts-check
/**
 * `npm run fake-upstream` — LOCAL STAND-IN ONLY, never used in production.
 * Starts the fake provider server from test/fake-upstream on 127.0.0.1 (default port 8790) so
 * Switchboard can run offline: point `<ID>_BASE_URL` at `http://127.0.0.1:8790/<provider-id>`
 * (`npm run dev -- --offline` does this for every provider).
 *
 *   npm run fake-upstream -- [--port 8790]
 */
import { fileURLToPath } from "node:url";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { portIsFree } from "./lib/dev-plan.mjs";
import { FAKE_UPSTREAM_PORT, parseArgs } from "./lib/local.mjs";

/** @param {number} port */
export async function startLocalFakeUpstream(port) {
  const server = await startFakeUpstream({ port, host: "127.0.0.1" });
  console.log(`[fake-upstream] local stand-in for provider APIs (NOT production) on ${server.url}/<provider-id>`);
  return server;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = parseArgs(process.argv.slice(2));
  const port = typeof args.port === "string" ? Number(args.port) : FAKE_UPSTREAM_PORT;
  if (!(await portIsFree(port))) {
    console.error(`[fake-upstream] port ${port} is already in use; pick another: npm run fake-upstream -- --port ${port + 1}`);
    process.exit(2);
  }
  const server = await startLocalFakeUpstream(port);
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

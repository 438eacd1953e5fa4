// The LOGS consumer knows which delivery is a message's last (it then marks bodies it cannot store
// as dropped, src/usage/bodies.ts): its LOGS_MAX_RETRIES must be the consumer's max_retries in
// wrangler.jsonc, which the Worker cannot read at run time.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

test("LOGS_MAX_RETRIES in the log consumer is the LOGS consumer's max_retries in wrangler.jsonc", () => {
  const jsonc = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  const consumer = /\{\s*"queue"\s*:\s*"switchboard-logs"\s*,([^}]*)\}/.exec(jsonc)?.[1] ?? "";
  const configured = /"max_retries"\s*:\s*(\d+)/.exec(consumer)?.[1];
  assert.ok(configured, "wrangler.jsonc sets max_retries for the switchboard-logs consumer");
  const source = readFileSync(join(ROOT, "src", "usage", "log-consumer.ts"), "utf8");
  const inCode = /export const LOGS_MAX_RETRIES = (\d+);/.exec(source)?.[1];
  assert.equal(inCode, configured);
});

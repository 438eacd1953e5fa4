// The test suite must not see the developer's .dev.vars (vitest.config.ts uses hermeticWranglerConfig).
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { hermeticWranglerConfig } from "../lib/hermetic.mjs";
import { ROOT } from "../lib/local.mjs";

test("a variable that exists only in .dev.vars reaches the plain config but not the hermetic copy", () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-hermetic-"));
  try {
    copyFileSync(join(ROOT, "wrangler.jsonc"), join(dir, "wrangler.jsonc"));
    mkdirSync(join(dir, "public")); // the static assets directory wrangler.jsonc names
    writeFileSync(join(dir, ".dev.vars"), "HERMETIC_PROBE=from-dev-vars\nOPENAI_API_KEY=sk-local\n");
    const silence = console.log;
    console.log = () => {};
    try {
      const plain = unstable_getMiniflareWorkerOptions(join(dir, "wrangler.jsonc")).workerOptions.bindings ?? {};
      assert.equal(plain.HERMETIC_PROBE, "from-dev-vars", "the probe must be visible without the copy (else this test proves nothing)");
      const copy = hermeticWranglerConfig(dir, join(dir, "hermetic"));
      const opts = unstable_getMiniflareWorkerOptions(copy);
      const bindings = opts.workerOptions.bindings ?? {};
      assert.equal(bindings.HERMETIC_PROBE, undefined);
      assert.equal(bindings.OPENAI_API_KEY, undefined);
      assert.equal(opts.main, join(dir, "src", "index.ts"));
      assert.equal(bindings.ENVIRONMENT, "production", "wrangler.jsonc vars are kept");
    } finally {
      console.log = silence;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("only the pool's teardown WebSocket line is dropped from stderr", async () => {
  const { dropPoolTeardownNoise } = await import("../lib/hermetic.mjs");
  /** @type {string[]} */
  const seen = [];
  const fake = /** @type {any} */ ({ write: (/** @type {string} */ c) => (seen.push(c), true) });
  dropPoolTeardownNoise(fake);
  fake.write("exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected\n");
  fake.write("uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n");
  fake.write("exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected; and more\n");
  assert.deepEqual(seen, [
    "uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n",
    "exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected; and more\n",
  ]);
});

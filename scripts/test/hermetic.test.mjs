// The test suite must not see the developer's .dev.vars (vitest.config.ts uses hermeticWranglerConfig).
import assert from "node:assert/strict";
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

test("only the pool's teardown line and workerd's report of a reset upstream fetch are dropped", async () => {
  const { dropPoolTeardownNoise } = await import("../lib/hermetic.mjs");
  /** @type {string[]} */
  const seen = [];
  const fake = /** @type {any} */ ({ write: (/** @type {string} */ c) => (seen.push(c), true) });
  dropPoolTeardownNoise(fake);
  const stack = "stack: /x/node_modules/@cloudflare/workerd-linux-64/bin/workerd@51ccf21 /x/node_modules/@cloudflare/workerd-linux-64/bin/workerd@51cd135\n";
  fake.write("exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected\n");
  // The block workerd prints for a fetch whose connection the upstream reset, as one chunk and line by line.
  fake.write(`exception = kj/async-io.c++:60: disconnected: stream disconnected prematurely\n${stack}`);
  fake.write("uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n");
  fake.write("uncaught exception; exception = workerd/jsg/_virtual_includes/iterator/workerd/jsg/value.h:1480: disconnected: jsg.Error: Network connection lost.\n");
  fake.write(stack);
  fake.write(`exception = kj/async.c++:220: disconnected: PumpToReader was destroyed\n${stack}`);
  // Everything else goes through: other rejections, a native stack after a kept line, near misses.
  fake.write("uncaught exception; source = Uncaught (in promise); stack = Error: boom\n");
  fake.write(stack);
  fake.write("exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected; and more\n");
  fake.write("ok line\nexception = kj/async-io.c++:60: disconnected: stream disconnected prematurely\nlast line\n");
  assert.deepEqual(seen, [
    "uncaught exception; source = Uncaught (in promise); stack = Error: boom\n",
    stack,
    "exception = workerd/api/web-socket.c++:821: disconnected: WebSocket peer disconnected; and more\n",
    "ok line\nlast line\n",
  ]);
});

test("a checkout whose node_modules is a hard-linked copy of another's gets its own test config", () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-hermetic-link-"));
  try {
    copyFileSync(join(ROOT, "wrangler.jsonc"), join(dir, "wrangler.jsonc"));
    const other = join(dir, "other-checkout-config.jsonc");
    writeFileSync(other, "the other checkout's config");
    mkdirSync(join(dir, "hermetic"));
    linkSync(other, join(dir, "hermetic", "wrangler.jsonc")); // what `cp -al node_modules` leaves
    const copy = hermeticWranglerConfig(dir, join(dir, "hermetic"));
    assert.equal(readFileSync(other, "utf8"), "the other checkout's config");
    assert.ok(readFileSync(copy, "utf8").includes(JSON.stringify(join(dir, "src", "index.ts"))), "the copy names this checkout's sources");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

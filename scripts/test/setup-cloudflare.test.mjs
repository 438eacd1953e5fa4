// `npm run setup:cloudflare -- --dry-run` walks every step offline; the id handling is idempotent.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";
import { currentIds, parseD1Id, parseDeployUrl, parseKvId, setupCloudflare, withLogBindings, withResourceIds } from "../setup-cloudflare.mjs";

const D1 = "d1d1d1d1-0000-4000-8000-000000000001";
const KV = "0123456789abcdef0123456789abcdef";

test("--dry-run walks through every step in order without touching the config", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-setup-"));
  try {
    const config = join(dir, "wrangler.jsonc");
    copyFileSync(join(ROOT, "wrangler.jsonc"), config);
    /** @type {string[]} */
    const lines = [];
    const result = await setupCloudflare({ dryRun: true, config, yes: true, env: {}, log: (l) => lines.push(l) });
    const commands = lines.filter((l) => l.startsWith("$ npx wrangler ")).map((l) => l.slice("$ npx wrangler ".length));
    const order = ["whoami", "d1 create switchboard", "kv namespace create switchboard-cache", "r2 bucket create switchboard-uploads", "r2 bucket create switchboard-logs",
      "r2 bucket lifecycle add switchboard-logs expire-logs logs/ --expire-days 30", "r2 bucket lifecycle add switchboard-logs expire-bodies bodies/ --expire-days 30", "queues create switchboard-logs-dlq", "queues create switchboard-logs", "queues create switchboard-deliveries", "d1 migrations apply DB --remote", "secret put KEY_HASH_SECRET", "secret put ADMIN_TOKEN", "deploy --minify"];
    let at = -1;
    for (const cmd of order) {
      const i = commands.findIndex((c, idx) => idx > at && c.startsWith(cmd));
      assert.ok(i > at, `expected \`${cmd}\` after the previous step in:\n${commands.join("\n")}`);
      at = i;
    }
    assert.ok(lines.some((l) => l.includes(`would set database_id=${D1}`)));
    assert.ok(lines.some((l) => l.includes("would POST https://switchboard.example.workers.dev/v1/admin/organizations")));
    assert.ok(!lines.join("\n").match(/secret put \w+_API_KEY/), "no provider key without one in the environment");
    assert.equal(readFileSync(config, "utf8"), readFileSync(join(ROOT, "wrangler.jsonc"), "utf8"));
    assert.deepEqual(result, { d1: D1, kv: KV, url: "https://switchboard.example.workers.dev" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ids already in wrangler.jsonc are reused, not created again; provider keys come from the environment", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sb-setup-"));
  try {
    const config = join(dir, "wrangler.jsonc");
    copyFileSync(join(ROOT, "wrangler.jsonc"), config);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(config, withResourceIds(readFileSync(config, "utf8"), { d1: "11111111-2222-4333-8444-555555555555", kv: "ffffffffffffffffffffffffffffffff" }));
    /** @type {string[]} */
    const lines = [];
    await setupCloudflare({ dryRun: true, config, yes: true, env: { OPENAI_API_KEY: "sk-test" }, log: (l) => lines.push(l) });
    const text = lines.join("\n");
    assert.doesNotMatch(text, /d1 create|kv namespace create/);
    assert.match(text, /wrangler\.jsonc is up to date/);
    assert.match(text, /secret put OPENAI_API_KEY \(value on stdin\)/);
    assert.doesNotMatch(text, /sk-test/, "secret values are never printed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("wrangler output parsing and the config rewrite", () => {
  assert.equal(parseD1Id('[[d1_databases]]\nbinding = "DB"\ndatabase_id = "8a1c7c1e-1111-4222-8333-944455556666"'), "8a1c7c1e-1111-4222-8333-944455556666");
  assert.equal(parseD1Id('{ "database_id": "8a1c7c1e-1111-4222-8333-944455556666" }'), "8a1c7c1e-1111-4222-8333-944455556666");
  assert.equal(parseKvId('{ "binding": "CACHE", "id": "0123456789abcdef0123456789abcdef" }'), "0123456789abcdef0123456789abcdef");
  assert.equal(parseDeployUrl("Uploaded switchboard\nDeployed switchboard triggers (1.2 sec)\n  https://switchboard.acme.workers.dev\nCurrent Version ID: x"), "https://switchboard.acme.workers.dev");
  const source = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  assert.deepEqual(currentIds(source), { d1: null, kv: null });
  const once = withResourceIds(source, { d1: D1, kv: KV });
  assert.deepEqual(currentIds(once), { d1: D1, kv: KV });
  assert.equal(withResourceIds(once, { d1: D1, kv: KV }), once);
  assert.equal(once.split("\n").length, source.split("\n").length, "comments and layout are kept");
});

test("a wrangler.jsonc without the request-log bindings gets them (queue with dead-letter queue, bucket); one with them is left alone", () => {
  const source = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  assert.equal(withLogBindings(source), source);
  const old = source
    .replace(/\n\s*\/\/ Raw request records[^\n]*\n\s*\{ "binding": "LOGS_BUCKET"[^\n]*\n/, "\n")
    .replace(/\s*\/\/ Settled request records[^\n]*\n\s*"queues": \{[\s\S]*?\n {2}\},\n/, "\n");
  assert.doesNotMatch(old, /LOGS_BUCKET|"queues"/);
  const fixed = withLogBindings(old);
  assert.equal(withLogBindings(fixed), fixed, "idempotent");
  const config = JSON.parse(fixed.replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1"));
  assert.ok(config.r2_buckets.some((/** @type {any} */ b) => b.binding === "LOGS_BUCKET" && b.bucket_name === "switchboard-logs"));
  assert.deepEqual(config.queues.producers, [{ binding: "LOGS", queue: "switchboard-logs" }]);
  assert.equal(config.queues.consumers[0].dead_letter_queue, "switchboard-logs-dlq");
});

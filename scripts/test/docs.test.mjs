// README and docs/: short README, the pages it promises, no references to documents outside the
// repository, and shell examples that docs:check can run (or that say why they cannot).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { documentationFiles, scriptFor, shellBlocks } from "../docs-check.mjs";
import { ROOT } from "../lib/local.mjs";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

test("the README is at most 200 lines and opens with the two commands", () => {
  const lines = readme.split("\n");
  assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
  const first = shellBlocks(readme, "README.md")[0];
  assert.ok(first && first.line <= 5, "the first block is at the top");
  assert.deepEqual(first.code.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()), ["npm install && npm run dev", "npm test"]);
});

test("README and docs/README.md link every documentation page", () => {
  const pages = ["configuration", "api", "keys-and-iam", "routing-and-cache", "mcp", "analytics", "deployment", "architecture", "benchmarks", "security", "admission", "dialects", "dashboard"];
  const index = readFileSync(join(ROOT, "docs", "README.md"), "utf8");
  for (const page of pages) {
    assert.ok(readme.includes(`(docs/${page}.md)`), `README links docs/${page}.md`);
    assert.ok(index.includes(`(${page}.md)`), `docs/README.md links ${page}.md`);
  }
});

test("no page cites documents a reader of the repository does not have", () => {
  for (const file of documentationFiles()) {
    const text = readFileSync(file, "utf8");
    const hit = /\b(spec|contract)(\s+(section\s+)?\d[\d.]*|\s+requires|\))/i.exec(text);
    assert.equal(hit, null, `${file}: "${hit?.[0]}"`);
  }
});

test("examples: every sh block runs under docs:check unless marked, and the markers stay rare", () => {
  const blocks = documentationFiles().flatMap((f) => shellBlocks(readFileSync(f, "utf8"), f));
  const skipped = blocks.filter((b) => b.skip);
  assert.ok(blocks.length >= 25, `only ${blocks.length} examples`);
  assert.ok(skipped.length <= blocks.length / 4, `${skipped.length} of ${blocks.length} examples are skipped`);
  for (const b of blocks.filter((x) => !x.skip)) {
    assert.doesNotMatch(b.code, /\.\.\.|<[a-z-]+>|swb_\.\.\.|KEY_ID=\.\.\./, `${b.file}:${b.line} has a placeholder`);
    assert.doesNotMatch(b.code, /npm run dev\b(?! --)|npm test\b/, `${b.file}:${b.line} would not return`);
  }
});

test("block extraction, skip markers and the rewrites docs:check applies", () => {
  const md = "# T\n\n<!-- docs-check: skip (needs an account) -->\n```sh\nwrangler deploy\n```\n\ntext\n\n```sh\ncurl http://localhost:8787/ -d @./.dev-credentials.json\n```\n\n```json\n{}\n```\n";
  const blocks = shellBlocks(md, "x.md");
  assert.deepEqual(blocks.map((b) => [b.line, b.skip]), [[4, true], [10, false]]);
  const script = scriptFor(blocks, { port: 8748, credentials: "/tmp/c.json" });
  assert.doesNotMatch(script, /wrangler deploy/);
  assert.match(script, /curl http:\/\/localhost:8748\/ -d @\/tmp\/c\.json/);
  assert.match(script, /^set -euo pipefail$/m);
  assert.match(script, /--fail-with-body/);
});

// Claims a review found wrong, each checked against the code it describes.
const doc = (/** @type {string} */ f) => readFileSync(join(ROOT, f), "utf8");
/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (/** @type {string} */ h) => h.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
const anchorsOf = (/** @type {string} */ text) => new Set([...text.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] ?? "")));

test("every #anchor link in README and docs/ names a heading of its page", () => {
  for (const file of documentationFiles()) {
    const text = readFileSync(file, "utf8");
    const dir = file.slice(0, file.lastIndexOf("/"));
    for (const m of text.matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
      const target = m[1] ? join(dir, m[1]) : file;
      if (!target.endsWith(".md")) continue;
      assert.ok(anchorsOf(readFileSync(target, "utf8")).has(m[2] ?? ""), `${file}: dead link ${m[0]}`);
    }
  }
});

test("error codes, sign-in limits and the client-IP order in the docs are the code's", () => {
  const api = doc("docs/api.md");
  assert.match(doc("src/routes/middleware/json-body.ts"), /"invalid_json"/);
  assert.match(api, /\| malformed JSON \| 400 \| `invalid_json` \|/);
  const signIn = doc("src/auth/sign-in.ts");
  const perIp = /ATTEMPTS_PER_IP = (\d+)/.exec(signIn)?.[1];
  const free = /FREE_FAILURES = (\d+)/.exec(signIn)?.[1];
  assert.ok(perIp && free);
  assert.ok(api.includes(`${perIp} attempts per client IP per 15 min; after ${free} failures`), "api.md's sign-in limits");
  assert.ok(doc("docs/security.md").includes(`after ${free} failures`));
  for (const f of ["docs/keys-and-iam.md", "docs/security.md"]) {
    const text = doc(f);
    const cf = text.indexOf("`CF-Connecting-IP` when present");
    assert.ok(cf >= 0, `${f}: the client IP is CF-Connecting-IP first`);
  }
  assert.doesNotMatch(doc("docs/keys-and-iam.md"), /client IP is the first `X-Forwarded-For`/);
  assert.match(doc("src/routes/chat/response.ts"), /requested_provider: string;/);
  assert.doesNotMatch(api, /"requested_provider": null/);
  assert.doesNotMatch(doc(".dev.vars.example"), /\b(spec|contract)\b/i);
  assert.doesNotMatch(readme, /Hello from openai\//, "the stand-in's provider depends on routing");
});

test("deployment.md's manual path creates every bucket, queue and dead-letter queue wrangler.jsonc binds, with the log lifecycle rules", () => {
  const jsonc = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  const doc = readFileSync(join(ROOT, "docs", "deployment.md"), "utf8");
  const manual = shellBlocks(doc, "docs/deployment.md").find((b) => b.code.includes("wrangler d1 create switchboard"));
  assert.ok(manual, "the manual block");
  const buckets = [...jsonc.matchAll(/"bucket_name"\s*:\s*"([^"]+)"/g)].map((m) => m[1]);
  const queues = new Set([...jsonc.matchAll(/"(?:queue|dead_letter_queue)"\s*:\s*"([^"]+)"/g)].map((m) => m[1]));
  assert.ok(buckets.length >= 2 && queues.size >= 3, "wrangler.jsonc binds buckets and queues");
  for (const b of buckets) assert.match(manual.code, new RegExp(`wrangler r2 bucket create ${b}(\\s|$)`), `creates the bucket ${b}`);
  for (const q of queues) assert.match(manual.code, new RegExp(`wrangler queues create ${q}(\\s|$)`), `creates the queue ${q}`);
  const days = /"REQUEST_LOG_RETENTION_DAYS"\s*:\s*"(\d+)"/.exec(jsonc)?.[1];
  const logs = /"binding"\s*:\s*"LOGS_BUCKET"\s*,\s*"bucket_name"\s*:\s*"([^"]+)"/.exec(jsonc)?.[1];
  for (const prefix of ["logs/", "bodies/"]) {
    assert.match(manual.code, new RegExp(`wrangler r2 bucket lifecycle add ${logs} \\S+ ${prefix} --expire-days ${days}\\b`), `expires ${prefix} after ${days} days`);
  }
  // A dead-letter queue must exist before the consumer that names it is deployed.
  assert.ok(manual.code.indexOf("queues create switchboard-logs-dlq") < manual.code.indexOf("npm run deploy"));
});

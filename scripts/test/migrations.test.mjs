// migrations/ must stay what drizzle-kit would write for src/db/schema.ts: otherwise the next
// `npm run db:generate` repeats changes a hand-written migration already made (and deployed), and
// `wrangler d1 migrations apply` runs that duplicate against databases that have them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const MIGRATIONS = join(ROOT, "migrations");
const DRIZZLE_KIT = join(ROOT, "node_modules", "drizzle-kit", "bin.cjs");

/**
 * A throwaway copy of what drizzle-kit reads (config, schema, migrations), so `generate` can write
 * into it without touching the checkout. node_modules is linked for the config's and schema's imports.
 * @param {(dir: string) => void} body
 */
function inScratchCopy(body) {
  const dir = mkdtempSync(join(tmpdir(), "sb-migrations-"));
  try {
    cpSync(join(ROOT, "drizzle.config.ts"), join(dir, "drizzle.config.ts"));
    cpSync(join(ROOT, "src", "db"), join(dir, "src", "db"), { recursive: true });
    cpSync(MIGRATIONS, join(dir, "migrations"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** @param {string} cwd @param {string[]} args */
function drizzleKit(cwd, args) {
  // A prompt (e.g. "is this column renamed?") would wait forever: no stdin, bounded time.
  return spawnSync(process.execPath, [DRIZZLE_KIT, ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
}

/** @param {string} dir @returns {Map<string, string>} path relative to dir -> content */
function tree(dir) {
  /** @type {Map<string, string>} */
  const files = new Map();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    files.set(relative(dir, path), readFileSync(path, "utf8"));
  }
  return files;
}

test("drizzle-kit generate finds nothing to migrate and writes no file", () => {
  inScratchCopy((dir) => {
    const before = tree(join(dir, "migrations"));
    const r = drizzleKit(dir, ["generate"]);
    const after = tree(join(dir, "migrations"));
    const written = [...after].filter(([path, text]) => before.get(path) !== text);
    assert.deepEqual(
      written.map(([path]) => path),
      [],
      "migrations/ is behind src/db/schema.ts; drizzle-kit would write:\n" +
        written.filter(([path]) => path.endsWith(".sql")).map(([path, text]) => `--- ${path}\n${text}`).join("\n"),
    );
    assert.equal(r.status, 0, r.stderr || r.stdout);
    assert.match(r.stdout, /No schema changes, nothing to migrate/);
  });
});

test("drizzle-kit check passes", () => {
  inScratchCopy((dir) => {
    const r = drizzleKit(dir, ["check"]);
    assert.equal(r.status, 0, r.stderr || r.stdout);
    assert.doesNotMatch(r.stdout + r.stderr, /warning|collision|malformed/i);
  });
});

test("every SQL file has its journal entry and snapshot, in filename order", () => {
  /** @type {{ entries: { idx: number, when: number, tag: string }[] }} */
  const journal = JSON.parse(readFileSync(join(MIGRATIONS, "meta", "_journal.json"), "utf8"));
  const sqlFiles = readdirSync(MIGRATIONS).filter((f) => f.endsWith(".sql")).sort();
  // wrangler applies by filename, drizzle by journal order: they must be the same sequence.
  assert.deepEqual(journal.entries.map((e) => `${e.tag}.sql`), sqlFiles);
  let previousId = "00000000-0000-0000-0000-000000000000";
  let previousWhen = -Infinity;
  for (const entry of journal.entries) {
    // drizzle-kit names the next file after the last entry's idx + 1, so idx must equal the
    // file's number for a new migration to sort after every existing one (0004 -> 0005, not 0002).
    const prefix = entry.tag.split("_")[0] ?? "";
    assert.equal(String(entry.idx).padStart(4, "0"), prefix, `${entry.tag}: idx`);
    assert.ok(entry.when > previousWhen, `${entry.tag}: "when" must increase`);
    previousWhen = entry.when;
    const snapshotPath = join(MIGRATIONS, "meta", `${prefix}_snapshot.json`);
    assert.ok(existsSync(snapshotPath), `${entry.tag}: no meta/${prefix}_snapshot.json`);
    /** @type {{ id: string, prevId: string }} */
    const snapshot = JSON.parse(readFileSync(snapshotPath, "utf8"));
    assert.equal(snapshot.prevId, previousId, `${entry.tag}: snapshot follows the previous one`);
    previousId = snapshot.id;
  }
});

// @ts-check
/**
 * `--baseline-ref REF` (bench/run.mjs): builds a git ref (a commit, branch or tag) the way
 * `--baseline DIR` expects its directory: the ref's tree (`git archive`) with this checkout's
 * node_modules, bundled by wrangler into node_modules/.cache/switchboard-baseline/<sha>/dist
 * (reused when already built).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";

/**
 * Bundles the tree of commit `sha` into `dir`/dist as `wrangler deploy` would, with this
 * checkout's node_modules; `edit(dir)` may change the tree first. The tree lives below
 * node_modules, where esbuild reads no tsconfig.json of its own accord: it is named explicitly, or
 * the dashboard's JSX would be compiled for React.
 */
export function buildTree(root, sha, dir, { instruments, edit = () => {} }) {
  const outdir = path.join(dir, "dist");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${sha} | tar -x -C "${dir}"`], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  edit(dir);
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  const args = ["wrangler", "deploy", "--dry-run", "--minify", "--define", `__BENCH_INSTRUMENTS__:${instruments}`, "--tsconfig", path.join(dir, "tsconfig.json"), "--outdir", outdir];
  execFileSync("npx", args, { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  return outdir;
}

export function buildRef(root, ref, { instruments = true } = {}) {
  const sha = execFileSync("git", ["rev-parse", "--short=12", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  // Without the bench instruments (--peers), the bundle `wrangler deploy` ships, like this build's.
  const dir = path.join(root, "node_modules", ".cache", "switchboard-baseline", instruments ? sha : `${sha}-deployed`);
  const outdir = path.join(dir, "dist");
  if (!statSync(outdir, { throwIfNoEntry: false })?.isDirectory()) buildTree(root, sha, dir, { instruments });
  return { dir: outdir, label: `${ref} (${sha})` };
}

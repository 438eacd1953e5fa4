// @ts-check
/**
 * Hermetic tests: wrangler reads `.dev.vars` (and `.env`) from the directory of the config file it
 * is given. The test suite therefore gets a copy of wrangler.jsonc in a directory of its own (under
 * node_modules/.cache), with its relative paths made absolute, so the developer's local secrets and
 * provider keys never reach a test. vitest.config.ts sets every binding the tests need.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * @param {string} root directory holding wrangler.jsonc
 * @param {string} [outDir] where the copy goes (default `<root>/node_modules/.cache/switchboard-test-config`)
 * @returns {string} path of the copy
 */
export function hermeticWranglerConfig(root, outDir = join(root, "node_modules", ".cache", "switchboard-test-config")) {
  mkdirSync(outDir, { recursive: true });
  const source = readFileSync(join(root, "wrangler.jsonc"), "utf8")
    .replace(/"main"\s*:\s*"([^"]+)"/, (_m, p) => `"main": ${JSON.stringify(resolve(root, p))}`)
    .replace(/"migrations_dir"\s*:\s*"([^"]+)"/g, (_m, p) => `"migrations_dir": ${JSON.stringify(resolve(root, p))}`)
    .replace(/"\$schema"\s*:\s*"[^"]*",?/, "");
  const path = join(outDir, "wrangler.jsonc");
  // Written beside and renamed into place: a checkout whose node_modules is a hard-linked copy of
  // another's (`cp -al`, git worktrees) gets its own file instead of rewriting the shared inode,
  // which would point the other checkout's test runs at this one's sources.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, source);
  renameSync(tmp, path);
  return path;
}

/**
 * workerd reports the pool's own runner WebSocket closing at the end of every test file as
 * `exception = workerd/api/web-socket.c++:NNN: disconnected: WebSocket peer disconnected`.
 * @cloudflare/vitest-pool-workers filters its other teardown messages and, from 0.16, this one too
 * (workers-sdk PR 13833); its log handler cannot be configured, so until the pool is upgraded this
 * drops exactly that line from the test process' output (the pool writes it to stdout) and lets everything else through.
 */
export const POOL_TEARDOWN_LINE = /^exception = workerd\/api\/web-socket\.c\+\+:\d+: disconnected: WebSocket peer disconnected$/;

/**
 * workerd's own report of an outbound `fetch` whose connection the peer dropped before answering
 * (and of a response stream cut by a client that went away)
 * (the fake upstream's `reset` directives, test/fake-upstream/README.md). The fetch rejects and
 * our code catches it (the tests assert the 502/failover that follows); workerd still logs the
 * native exception with its C++ stack, and an "Uncaught (in promise)" line for a promise internal
 * to its fetch implementation: no JS handler of ours sees it, and a real unhandled rejection is
 * reported (and fails the run) by vitest itself. Exactly these lines, and the `stack:` line of
 * native addresses right after one of them, are dropped.
 */
export const FETCH_RESET_LINES = [
  /^exception = kj\/async-io(-unix)?\.c\+\+:\d+: disconnected: (stream disconnected prematurely|.*Connection reset by peer)$/,
  /^uncaught exception; source = Uncaught \(in promise\); stack = Error: Network connection lost\.$/,
  /^uncaught exception; exception = workerd\/jsg\/\S+: disconnected: jsg\.Error: Network connection lost\.$/,
  // A response stream whose client went away mid-body (the client-abort tests): workerd reports
  // the pump it cut; the gateway settles the request through the abort signal.
  /^exception = kj\/async\.c\+\+:\d+: disconnected: PumpToReader was destroyed$/,
];
const NATIVE_STACK_LINE = /^stack:( \S*workerd@[0-9a-f]+)+$/;

/**
 * Wraps `stream.write` so that the lines above are dropped and everything else goes through
 * unchanged (line by line: a chunk may hold several lines or part of one).
 * @param {NodeJS.WriteStream} stream
 */
export function dropPoolTeardownNoise(stream) {
  const write = stream.write.bind(stream);
  let droppedPrevious = false;
  /** @param {string} line without its newline */
  const noise = (line) => {
    const drop = POOL_TEARDOWN_LINE.test(line) || FETCH_RESET_LINES.some((re) => re.test(line)) || (droppedPrevious && NATIVE_STACK_LINE.test(line));
    droppedPrevious = drop;
    return drop;
  };
  /** @type {typeof stream.write} */
  const filtered = (chunk, ...rest) => {
    if (typeof chunk !== "string") return write(chunk, .../** @type {[any]} */ (rest));
    const kept = chunk
      .split(/(?<=\n)/)
      .filter((part) => !noise(part.replace(/\r?\n$/, "")))
      .join("");
    if (kept === "") {
      const cb = rest.find((r) => typeof r === "function");
      if (typeof cb === "function") cb();
      return true;
    }
    return write(kept, .../** @type {[any]} */ (rest));
  };
  stream.write = filtered;
}

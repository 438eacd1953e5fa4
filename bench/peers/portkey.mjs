// @ts-check
/**
 * Portkey's open-source gateway (npm `@portkey-ai/gateway`, pinned in devDependencies) as a Worker,
 * for the `--peers` bench. The package ships only its Node build (`build/start-server.js`: the Hono
 * app, then `@hono/node-server`'s `serve()` and a start-up banner at the bottom). This bundles that
 * file for workerd unchanged except for its Node start-up: the argument list is fixed to
 * `--headless` (no log-stream UI), everything from the server start on is replaced by
 * `export default { fetch: app.fetch }` (what the project's own Worker entry, `src/index.ts`,
 * exports), the Node-only transports it imports but a chat request never reaches (`@hono/node-server`,
 * `@hono/node-ws`, `ws`, `ioredis`) are stubs, and Node built-ins get their `node:` prefix for
 * `nodejs_compat`. Its own dependencies (zod 3, jose, ...) resolve from the package's directory.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const STUBS = {
  "@hono/node-server": "export const serve = () => ({});",
  "@hono/node-ws": "export const createNodeWebSocket = () => ({ injectWebSocket() {}, upgradeWebSocket: () => async (c, next) => next() });",
  ws: "export default class WebSocketStub { constructor() { throw new Error('ws is not available in this Worker'); } }",
  ioredis: "export default class RedisStub { constructor() { throw new Error('redis is not available in this Worker'); } }",
  // Cohere batch output decoding only (a lazy require of a Node-stream library).
  avsc: "module.exports = {};",
};
const NODE_BUILTINS = /^(fs|fs\/promises|path|https|http|url|crypto|stream|util|zlib|events|buffer|os)$/;

/** Bundles Portkey's gateway for workerd; returns the script path, or throws saying why not. */
export async function buildPortkeyWorker(root) {
  const require = createRequire(path.join(root, "package.json"));
  let pkgJson;
  try {
    pkgJson = require.resolve("@portkey-ai/gateway/package.json");
  } catch {
    throw new Error("@portkey-ai/gateway is not installed (npm install)");
  }
  const pkgDir = path.dirname(pkgJson);
  const version = JSON.parse(readFileSync(pkgJson, "utf8")).version;
  const outDir = path.join(root, "node_modules", ".cache", "switchboard-peers");
  const out = path.join(outDir, `portkey-${version}.mjs`);
  if (existsSync(out)) return { script: out, version };
  let src = readFileSync(path.join(pkgDir, "build", "start-server.js"), "utf8").replace(/^#!.*\n/, "");
  const argv = /const (\w+)=process\.argv\.slice\(2\)/;
  const start = /const \w+=`http:\/\/localhost:\$\{\w+\}`;\w+\(\w+\(\{fetch:(\w+)\.fetch,port:\w+\}\)\)/;
  if (!argv.test(src) || !start.test(src)) throw new Error(`@portkey-ai/gateway ${version}: its Node start-up is not where this bundler expects it`);
  src = src.replace(argv, 'const $1=["--headless"]');
  const m = start.exec(src);
  src = `${src.slice(0, m.index)}export default { fetch: (req, env, ctx) => ${m[1]}.fetch(req, env, ctx) };\n`;
  src = src.replace(/from"(fs\/promises|fs|path|https|url|crypto|stream)"/g, 'from"node:$1"').replace(/import\("(fs|path|url)"\)/g, 'import("node:$1")');
  const esbuild = await import("esbuild");
  mkdirSync(outDir, { recursive: true });
  await esbuild.build({
    stdin: { contents: src, resolveDir: path.join(pkgDir, "build"), sourcefile: "portkey-start-server.js" },
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "import", "default"],
    external: ["node:*", "cloudflare:*"],
    outfile: out,
    logLevel: "error",
    plugins: [
      {
        name: "node-only-stubs",
        setup(b) {
          b.onResolve({ filter: NODE_BUILTINS }, (a) => ({ path: `node:${a.path}`, external: true }));
          b.onResolve({ filter: /^(@hono\/node-server|@hono\/node-ws|ws|ioredis|avsc)$/ }, (a) => ({ path: a.path, namespace: "stub" }));
          b.onLoad({ filter: /.*/, namespace: "stub" }, (a) => ({ contents: STUBS[/** @type {keyof typeof STUBS} */ (a.path)], loader: "js" }));
        },
      },
    ],
  });
  return { script: out, version };
}

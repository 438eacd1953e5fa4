// @ts-check
/**
 * `node bench/ablate.mjs NAME [REF]`: builds REF (default HEAD) with one feature left out, the way
 * `--baseline DIR` expects it, and prints the directory. Side by side with the full build in one
 * run, it says what that feature costs a request (its bound: the most that cutting it could win):
 *
 *     npm run bench -- --peers --baseline "$(node bench/ablate.mjs settlement)"
 *
 * An ablation is a named edit of the source (find -> replace); one that no longer finds its text
 * fails loudly instead of measuring the full build twice. The variants answer requests as the
 * bench sends them and are never deployable: they leave out what the product needs.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { buildTree } from "./baseline.mjs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** An edit that puts `line` (an early return) just before `find`. */
const before = (file, find, line) => ({ file, find, replace: `${line}\n${find}` });

/** @type {Record<string, { what: string; edits: Array<{ file: string; find: string; replace: string }> }>} */
export const ABLATIONS = {
  settlement: {
    what: "everything after an admitted request's answer: its record made durable in the key's object, the outbox, the log queue and its consumer (D1, R2), credit, token and member settlements",
    edits: [before("src/routes/chat/run.ts", "  const settling = queueSettlement(", "  if (run.admitted) return;")],
  },
  "durable-wait": {
    what: "the JSON answer's wait for its record (the record is still made durable, after the answer)",
    edits: [{ file: "src/routes/chat/serve.ts", find: "  await run.durable;\n  return new Response(text", replace: "  return new Response(text" }],
  },
  "early-call": {
    what: "the early upstream call (the first attempt starts only once admission answered)",
    edits: [before("src/billing/early-call.ts", "  const keyId = auth.key.id;\n  if (inDoubt.has", "  if (auth) return false;")],
  },
  continent: {
    what: "the caller's continent (request.cf is not read; routing and metrics see no continent)",
    edits: [before("src/routing/regions.ts", "  if (!production) {\n    const debug", "  if (request) return null;")],
  },
  "rate-limits": {
    what: "the key's and organization's rate limits (no window counted, no rate headers)",
    edits: [before("src/rate-limits/admission.ts", "  const waitUntil = (w: Promise<unknown>) => c.executionCtx.waitUntil(w);\n  const p = admitRate(", "  if (ctx) return ctx;")],
  },
  ranking: {
    what: "ranking the candidates (the plan is the candidates in catalogue order)",
    edits: [before("src/routes/chat/admit.ts", "  const view = rankingView(candidates, needs.callerContinent);\n  return orderCandidates(", "  if (candidates.length >= 0) return candidates;")],
  },
  "live-metrics": {
    what: "reporting each attempt to the live metrics (routing then ranks on what it had)",
    edits: [before("src/routing/live-metrics.ts", "  if (!samples.length) return;\n  for (const v of continent", "  if (samples.length >= 0) return;")],
  },
  middleware: {
    what: "the answer's middleware layers (overhead header, HTML security headers, the video origin check, rate-limit headers, CORS); the request id and body checks stay",
    edits: [
      { file: "src/app.ts", find: '  for (const door of ["/v1/chat/*", "/v1/messages", "/v1/messages/*", "/v1/responses", "/v1/responses/*"]) app.use(door, gatewayOverhead);\n', replace: "" },
      { file: "src/app.ts", find: '  app.use("*", htmlSecurityHeaders);\n  app.use("*", videoContentOriginOnly);\n  app.use("/v1/*", rateLimitHeaders);\n  app.use("/v1/*", gatewayCors);\n', replace: "  void [gatewayOverhead, htmlSecurityHeaders, videoContentOriginOnly, rateLimitHeaders, gatewayCors];\n" },
    ],
  },
  validation: {
    what: "validating the chat body (the body is used as sent: the bench's is valid)",
    edits: [before("src/routes/chat/schema.ts", "  refuseProtoMetadataKey(body);\n  const result = schemaFor(body)", "  if (body) return body as ChatRequest;")],
  },
  iam: {
    what: "access rules and residency (every candidate allowed)",
    edits: [before("src/iam/evaluate.ts", "  const residency = complianceRegionDecision(ctx, req);", "  if (ctx) return { allowed: true };")],
  },
  "node-compat": {
    what: "Node's compatibility layer (nodejs_compat): only AsyncLocalStorage (nodejs_als), which the agents SDK imports",
    edits: [{ file: "wrangler.jsonc", find: '"compatibility_flags": ["nodejs_compat", "no_nodejs_global_timers"]', replace: '"compatibility_flags": ["nodejs_als"]' }],
  },
};

/** Every ablation above at once: what the request path costs without any of those features. */
ABLATIONS.all = { what: "all of the above at once", edits: Object.values(ABLATIONS).flatMap((a) => a.edits) };

/** A chat completion with no choices: what a truncated build answers at its stop. */
const CANNED = `new Response('{"id":"stop","object":"chat.completion","choices":[]}', { headers: { "content-type": "application/json" } })`;

/**
 * Stops: the chat request cut short at one point (not a feature left out), answering a canned
 * completion there; beside the full build, the CPU from each stop to the next is what that stretch
 * of the path costs. `keyless`: it answers before the master API could make a key (any bearer will do).
 */
export const STOPS = {
  "stop-entry": {
    what: "answers at the Worker's fetch entry: the runtime and its configuration (bindings, assets), none of our code",
    keyless: true,
    edits: [{ file: "src/index.ts", find: "  fetch: (request, env, ctx) => app.fetch(", replace: `  fetch: (request, env, ctx) => request ? ${CANNED} : app.fetch(` }],
  },
  "stop-key": {
    what: "answers at the key's middleware: Hono's routing and every app-level middleware passed",
    keyless: true,
    edits: [{ file: "src/auth/gateway-key.ts", find: "    // Counted against the rate limits from here; the answer is awaited", replace: `    if (c) return ${CANNED};\n    // Counted against the rate limits from here; the answer is awaited` }],
  },
  "stop-route": {
    what: "answers at the chat route: the key authenticated and its rate limits counted",
    edits: [{ file: "src/routes/chat/route.ts", find: "  const body = await readJsonBody(c);", replace: `  if (c) return ${CANNED};\n  const body = await readJsonBody(c);` }],
  },
  "stop-admitted": {
    what: "answers once admitted: the body read and validated, the candidates selected, the budget admitted (never settled)",
    edits: [{ file: "src/routes/chat/execute.ts", find: "  const responseModel = run.input.echoRequestedModel", replace: `  if (admitted) { run.logged = true; return ${CANNED}; }\n  const responseModel = run.input.echoRequestedModel` }],
  },
  "stop-answered": {
    what: "answers once the upstream answered: the attempt made and its JSON parsed (nothing served, priced or settled)",
    edits: [{ file: "src/routes/chat/execute.ts", find: '      if (result.kind === "json") return serveJson(', replace: `      if (result.kind === "json") { run.logged = true; return ${CANNED}; }\n      if (result.kind === "json") return serveJson(` }],
  },
};

export function buildAblation(root, name, ref = "HEAD") {
  const ablation = ABLATIONS[name] ?? STOPS[name];
  if (!ablation) throw new Error(`unknown ablation '${name}'; known: ${[...Object.keys(ABLATIONS), ...Object.keys(STOPS)].join(", ")}`);
  const sha = execFileSync("git", ["rev-parse", "--short=12", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  const dir = path.join(root, "node_modules", ".cache", "switchboard-ablation", `${sha}-${name}`);
  const outdir = path.join(dir, "dist");
  if (existsSync(path.join(outdir, "index.js"))) return outdir;
  // As --peers builds Switchboard: the bundle `wrangler deploy` ships, without the bench instruments.
  return buildTree(root, sha, dir, {
    instruments: false,
    edit: (tree) => {
      for (const e of ablation.edits) {
        const file = path.join(tree, e.file);
        const text = readFileSync(file, "utf8");
        if (!text.includes(e.find)) throw new Error(`ablation '${name}': ${e.file} no longer contains ${JSON.stringify(e.find)}; update bench/ablate.mjs`);
        writeFileSync(file, text.replace(e.find, e.replace));
      }
    },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, ref] = process.argv.slice(2);
  if (!name) {
    console.error(`usage: node bench/ablate.mjs NAME [REF]\n${Object.entries({ ...ABLATIONS, ...STOPS }).map(([k, v]) => `  ${k}: ${v.what}`).join("\n")}`);
    process.exit(2);
  }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  console.log(buildAblation(root, name, ref));
}

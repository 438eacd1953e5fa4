// GET /openapi.json makes a typed client: openapi-typescript generates types from the live
// document (the Worker under wrangler dev on a free port) and tsc compiles them together with a
// client that reads the typed success bodies of the main operations.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import openapiTS, { astToString } from "openapi-typescript";
import { ROOT } from "../lib/local.mjs";

const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = /** @type {net.AddressInfo} */ (s.address()).port;
      s.close(() => resolve(port));
    });
  });

async function fetchDocument() {
  const port = /** @type {number} */ (await freePort());
  const inspector = /** @type {number} */ (await freePort());
  const work = mkdtempSync(join(tmpdir(), "swb-openapi-"));
  const child = spawn(process.execPath, [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--persist-to", join(work, "state"), "--log-level", "error"], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" },
    stdio: "ignore",
    detached: true,
  });
  try {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/openapi.json`);
        if (res.ok) return await res.json();
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error("wrangler dev did not serve /openapi.json within 120 s");
  } finally {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
    rmSync(work, { recursive: true, force: true });
  }
}

test("a client generated from /openapi.json compiles and types the success bodies", { timeout: 240_000 }, async () => {
  const doc = await fetchDocument();
  const types = astToString(await openapiTS(doc));
  const dir = mkdtempSync(join(tmpdir(), "swb-openapi-client-"));
  try {
    writeFileSync(join(dir, "schema.d.ts"), types);
    writeFileSync(
      join(dir, "client.ts"),
      `import type { paths } from "./schema";
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { "application/json": infer B } } } } ? B : never;
type Chat = Ok<"/v1/chat/completions", "post">;
type Responses = Ok<"/v1/responses", "post">;
type Messages = Ok<"/v1/messages", "post">;
type Embeddings = Ok<"/v1/embeddings", "post">;
type Models = Ok<"/v1/models", "get">;
type Rules = Ok<"/v1/master/keys/{ref}/iam", "get">;
export function read(chat: Chat, responses: Responses, messages: Messages, embeddings: Embeddings, models: Models, rules: Rules): string[] {
  const text: string | null = chat.choices[0]?.message.content ?? null;
  const status: string = responses.status;
  const stop: string | null = messages.stop_reason;
  const dims: number = Array.isArray(embeddings.data[0]?.embedding) ? embeddings.data[0].embedding.length : 0;
  const ids: string[] = models.data.map((m) => m.id);
  const types: string[] = rules.rules.map((r) => r.ruleType);
  return [text ?? "", status, stop ?? "", String(dims), ...ids, ...types];
}
// @ts-expect-error: the document types the body, so a wrong field does not compile
export const wrong = (chat: Chat): number => chat.choices[0]?.message.content;
`,
    );
    const r = spawnSync(process.execPath, [TSC, "--noEmit", "--strict", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler", "--skipLibCheck", "false", join(dir, "client.ts")], { encoding: "utf8" });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(types, /"\/v1\/chat\/completions": \{/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

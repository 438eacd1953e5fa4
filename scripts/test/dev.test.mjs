// `npm run dev`: stand-in by default without keys, keys the stand-in accepts, local crons, busy port.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { startFakeUpstream } from "../../test/fake-upstream/server.mjs";
import { STAND_IN_NOTICE, cronMatches, cronsOf, hasProviderCredential, portIsFree, standInVars } from "../lib/dev-plan.mjs";
import { ROOT } from "../lib/local.mjs";

test("a provider credential is any <ID>_API_KEY or the Bedrock key pair; nothing else counts", () => {
  assert.equal(hasProviderCredential({ ADMIN_TOKEN: "x", KEY_HASH_SECRET: "y", ENVIRONMENT: "development" }), false);
  assert.equal(hasProviderCredential({ OPENAI_API_KEY: "" }), false);
  assert.equal(hasProviderCredential({ OPENAI_BASE_URL: "http://proxy" }), false);
  assert.equal(hasProviderCredential({ OPENAI_API_KEY: "sk-1" }), true);
  assert.equal(hasProviderCredential({ INFERENCE_NET_API_KEY: "k" }), true);
  assert.equal(hasProviderCredential({ AWS_BEDROCK_ACCESS_KEY_ID: "AKIA", AWS_BEDROCK_SECRET_ACCESS_KEY: "s" }), true);
  assert.match(STAND_IN_NOTICE, /^no provider keys found: serving from the local stand-in; add OPENAI_API_KEY=\.\.\. to \.dev\.vars/);
});

test("crons: wrangler.jsonc's triggers, matched per UTC minute", () => {
  const crons = cronsOf('{ "triggers": { // c\n "crons": ["* * * * *", "17 3 * * *"] } }');
  assert.deepEqual(crons, ["* * * * *", "17 3 * * *"]);
  const at = new Date(Date.UTC(2026, 0, 5, 3, 17));
  assert.deepEqual(crons.filter((c) => cronMatches(c, at)), ["* * * * *", "17 3 * * *"]);
  assert.deepEqual(crons.filter((c) => cronMatches(c, new Date(Date.UTC(2026, 0, 5, 3, 18)))), ["* * * * *"]);
  assert.equal(cronMatches("*/5 * * * *", at), false);
});

/** `--var NAME:value` pairs as an object. */
const varsOf = (/** @type {string[]} */ flags) =>
  Object.fromEntries(flags.filter((_f, i) => i % 2 === 1).map((v) => [v.slice(0, v.indexOf(":")), v.slice(v.indexOf(":") + 1)]));

test("the stand-in accepts the keys dev.mjs passes: chat, images, videos, moderation", async () => {
  const fake = await startFakeUpstream({ port: 0 });
  try {
    const vars = varsOf(standInVars(fake.url));
    const post = (/** @type {string} */ url, /** @type {Record<string, string>} */ headers, /** @type {BodyInit} */ body) =>
      fetch(url, { method: "POST", headers, body }).then(async (r) => ({ status: r.status, text: await r.text() }));
    const json = (/** @type {string} */ key) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
    const chat = await post(`${vars.OPENAI_BASE_URL}/chat/completions`, json(vars.OPENAI_API_KEY), JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }));
    assert.equal(chat.status, 200, chat.text);
    const image = await post(`${vars.OPENAI_BASE_URL}/images/generations`, json(vars.OPENAI_API_KEY), JSON.stringify({ model: "gpt-image-1", prompt: "a cat" }));
    assert.equal(image.status, 200, image.text);
    const qwen = await post(
      `${vars.ALIBABA_BASE_URL}/api/v1/services/aigc/multimodal-generation/generation`,
      json(vars.ALIBABA_API_KEY),
      JSON.stringify({ model: "qwen-image", input: { messages: [{ role: "user", content: [{ text: "a cat" }] }] }, parameters: { size: "1328*1328" } }),
    );
    assert.notEqual(qwen.status, 401, qwen.text);
    const gemini = await post(
      `${vars.GOOGLE_AI_STUDIO_BASE_URL}/v1beta/models/gemini-2.5-flash-image:generateContent`,
      { "x-goog-api-key": vars.GOOGLE_AI_STUDIO_API_KEY, "content-type": "application/json" },
      JSON.stringify({ contents: [{ role: "user", parts: [{ text: "a cat" }] }], generationConfig: { responseModalities: ["IMAGE"] } }),
    );
    assert.notEqual(gemini.status, 403, gemini.text);
    const form = new FormData();
    form.set("model", "sora-2");
    form.set("prompt", "a cat");
    const video = await post(`${vars.OPENAI_BASE_URL}/videos`, { authorization: `Bearer ${vars.OPENAI_API_KEY}` }, form);
    assert.equal(video.status, 200, video.text);
    const moderation = await post(`${vars.OPENAI_BASE_URL}/moderations`, json(vars.OPENAI_API_KEY), JSON.stringify({ input: "hi" }));
    assert.equal(moderation.status, 200, moderation.text);
  } finally {
    await fake.close();
  }
});

test("a busy port: one line, exit code 2, no stack, nothing started", async () => {
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, "127.0.0.1", () => resolve(undefined)));
  const port = /** @type {net.AddressInfo} */ (blocker.address()).port;
  try {
    assert.equal(await portIsFree(port), false);
    const r = spawnSync(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--port", String(port)], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, "");
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", new RegExp(`port ${port} is already in use.*--port ${port + 1}`));
    assert.doesNotMatch(r.stderr, /\n\s+at |Error:/);
  } finally {
    blocker.close();
  }
  const bad = spawnSync(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--port", "abc"], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim().split("\n").length, 1);
});

test("--help: usage on stdout, exit 0, nothing written; an unknown flag: one line, exit 2", () => {
  const devVars = join(ROOT, ".dev.vars");
  const before = existsSync(devVars) ? statSync(devVars).mtimeMs : null;
  const help = spawnSync(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--help"], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: npm run dev/);
  for (const flag of ["--port", "--inspector-port", "--persist-to", "--offline", "--help"]) assert.ok(help.stdout.includes(flag), flag);
  assert.equal(existsSync(devVars) ? statSync(devVars).mtimeMs : null, before, "--help wrote .dev.vars");
  for (const bad of [["--bogus"], ["--port", "8787", "--verbose"], ["-x"]]) {
    const r = spawnSync(process.execPath, [join(ROOT, "scripts", "dev.mjs"), ...bad], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
    assert.equal(r.status, 2, bad.join(" "));
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`unknown option '${bad.at(-1)}'.*--help`));
  }
  assert.equal(existsSync(devVars) ? statSync(devVars).mtimeMs : null, before, "an unknown flag wrote .dev.vars");
  const badInspector = spawnSync(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--inspector-port", "x"], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
  assert.equal(badInspector.status, 2);
  assert.match(badInspector.stderr, /--inspector-port must be a port number/);
});

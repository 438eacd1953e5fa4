#!/usr/bin/env node
// @ts-check
/**
 * `npm run test:browser` — the dashboard in a real browser (Debian's `chromium`, driven by
 * playwright-core; no browser is ever downloaded). Starts its own gateway: the fake upstream
 * (test/fake-upstream) and `wrangler dev --test-scheduled` on a fresh local database, bootstraps an
 * organization, then runs the dashboard's scenarios (some kept in
 * scripts/lib/browser-security.mjs, browser-auth.mjs, browser-dashboard.mjs,
 * browser-requests-platform.mjs, browser-organization.mjs, …) and saves screenshots under
 * test-results/browser/ (gitignored). Exit code 0 when every scenario passed.
 *
 * Env: CHROMIUM (default /usr/bin/chromium), BROWSER_TEST_PORT (default 8760; the fake upstream
 * uses +1, the inspector +2).
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { ROOT, providerEnvPrefix, providerIds } from "./lib/local.mjs";
import * as dashboardScenarios from "./lib/browser-dashboard.mjs";
import * as security from "./lib/browser-security.mjs";
import * as requestsPlatformScenarios from "./lib/browser-requests-platform.mjs";
import * as traceScenarios from "./lib/browser-trace.mjs";
import * as auth from "./lib/browser-auth.mjs";
import * as routing from "./lib/browser-routing.mjs";
import * as sso from "./lib/browser-sso.mjs";
import { startOidcProvider } from "../test/oidc-provider/server.mjs";
import * as workbench from "./lib/browser-workbench.mjs";
import * as organization from "./lib/browser-organization.mjs";

const PORT = Number(process.env.BROWSER_TEST_PORT ?? 8760);
const BASE = `http://127.0.0.1:${PORT}`;
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = join(ROOT, "test-results", "browser");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const ADMIN_TOKEN = "browser-admin-token-0123456789";
const OWNER = { email: "owner@browser.test", password: "browser test password 1" };
const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const log = (/** @type {string} */ m) => console.log(`[browser] ${m}`);

/** @type {Array<{ name: string, ok: boolean, error?: string }>} */
const results = [];
async function scenario(/** @type {string} */ name, /** @type {() => Promise<void>} */ fn) {
  try {
    await fn();
    results.push({ name, ok: true });
    log(`ok   ${name}`);
  } catch (err) {
    results.push({ name, ok: false, error: err instanceof Error ? err.message : String(err) });
    log(`FAIL ${name}: ${err instanceof Error ? err.stack : err}`);
  }
}

// ---------- the gateway under test ----------

const work = mkdtempSync(join(tmpdir(), "swb-browser-"));
const persist = join(work, "state");
const mailDir = join(work, "tmp");
mkdirSync(mailDir, { recursive: true });
const fake = await startFakeUpstream({ port: PORT + 1 });
const upstream = `http://127.0.0.1:${fake.port}`;
// A real OpenID provider for the single sign-on scenario (any free port; it accepts our callback).
const oidc = await startOidcProvider({ port: 0, redirectOrigins: [BASE] });

const vars = ["--var", `PUBLIC_URL:${BASE}`, "--var", `ADMIN_TOKEN:${ADMIN_TOKEN}`, "--var", "KEY_HASH_SECRET:browser-key-hash-secret-0123456789abcdef", "--var", "ENVIRONMENT:development", "--var", "LOG_FLUSH_MS:50"];
for (const id of providerIds()) {
  const p = providerEnvPrefix(id);
  vars.push("--var", `${p}_BASE_URL:${upstream}/${id}`, "--var", `${p}_API_KEY:browser-dummy-${id}`);
}

const migrate = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], { cwd: ROOT, env: childEnv, encoding: "utf8" });
if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}`);

const wrangler = spawn(
  process.execPath,
  [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(PORT), "--inspector-port", String(PORT + 2), "--test-scheduled", "--persist-to", persist, "--log-level", "warn", ...vars],
  // TMPDIR: wrangler dev's send_email binding writes each message as an .eml file under
  // $TMPDIR/miniflare-*/files/email/; the acceptance scenario reads the invitation from there.
  { cwd: ROOT, env: { ...childEnv, TMPDIR: mailDir }, stdio: ["ignore", "pipe", "pipe"], detached: true },
);
let wranglerOut = "";
wrangler.stdout.on("data", (d) => (wranglerOut += d));
wrangler.stderr.on("data", (d) => (wranglerOut += d));

let browserContext = /** @type {import("playwright-core").BrowserContext | null} */ (null);
async function cleanup() {
  await browserContext?.close().catch(() => undefined);
  try {
    if (wrangler.pid) process.kill(-wrangler.pid, "SIGTERM");
  } catch {
    // already gone
  }
  await fake.close().catch(() => undefined);
  await oidc.close().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

async function waitForGateway() {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited:\n${wranglerOut}`);
    try {
      const r = await fetch(`${BASE}/?skip=redis`);
      if (r.status === 200 || r.status === 503) return;
    } catch {
      // not up yet
    }
    await sleep(500);
  }
  throw new Error(`gateway did not start:\n${wranglerOut}`);
}

/** @param {string} path @param {{ method?: string, token?: string, body?: unknown, headers?: Record<string, string> }} [o] */
async function api(path, o = {}) {
  const headers = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${BASE}${path}`, { method: o.method ?? "GET", headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, headers: res.headers };
}

/** The text bodies (base64, see src/lib/mail.ts) of the e-mails wrangler dev has "sent" to an address. */
function mailsTo(/** @type {string} */ address) {
  /** @type {string[]} */
  const out = [];
  // Wherever this miniflare version keeps them under TMPDIR (the folder layout changed in v5).
  const files = /** @type {string[]} */ (readdirSync(mailDir, { recursive: true })).filter((f) => String(f).endsWith(".eml"));
  {
    for (const f of files) {
      const raw = readFileSync(join(mailDir, String(f)), "utf8");
      if (!raw.includes(address)) continue;
      const body = raw.split(/\r?\n\r?\n/).slice(1).join("").replace(/\s+/g, "");
      out.push(Buffer.from(body, "base64").toString("utf8"));
    }
  }
  return out;
}

const chat = (/** @type {string} */ token, model = "gpt-4o-mini") =>
  api("/v1/chat/completions", { method: "POST", token, body: { model, messages: [{ role: "user", content: "Hello from the browser test" }] } });

try {
  await waitForGateway();
  log(`gateway up on ${BASE}`);
  const boot = await api("/v1/admin/organizations", {
    method: "POST",
    token: ADMIN_TOKEN,
    body: { name: "Browser Co", plan: "enterprise", owner: { email: OWNER.email, name: "Olive Owner", password: OWNER.password }, credits: "100" },
  });
  assert.equal(boot.status, 201, JSON.stringify(boot.json));
  const masterKey = boot.json.masterKey.token;
  const playgroundKey = boot.json.playgroundKey.token;

  mkdirSync(SHOTS, { recursive: true });
  browserContext = await chromium.launchPersistentContext(join(work, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1360, height: 900 },
  });
  const page = browserContext.pages()[0] ?? (await browserContext.newPage());
  /** @type {string[]} */
  const consoleErrors = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  page.on("response", (r) => {
    if (r.status() === 404) consoleErrors.push(`404 ${r.url()}`);
  });
  const shot = (/** @type {string} */ name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** Clicks something whose action reloads the page, and waits for that reload. */
  const reloads = async (/** @type {import("playwright-core").Locator} */ target) => {
    await Promise.all([page.waitForEvent("load"), target.click()]);
  };
  const keyRow = (/** @type {string} */ description) => page.locator("tr", { has: page.getByText(description, { exact: true }) });

  /** What the scenarios kept in scripts/lib/browser-*.mjs use ... */
  const ctx = { page, BASE, SHOTS, OWNER, masterKey, playgroundKey, consoleErrors, shot, reloads, keyRow, api, chat };
  /** ... and those in browser-security.mjs and browser-auth.mjs. */
  const authCtx = { ...ctx, ADMIN_TOKEN, upstream, browserContext, mailsTo, oidcIssuer: oidc.issuer };

  let secret = "";
  let rolled = "";

  await scenario("sign in (via /login)", async () => {
    await page.goto(`${BASE}/login`);
    assert.match(page.url(), /\/dashboard\/sign-in$/);
    await shot("01-sign-in");
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "Invalid e-mail or password" }).waitFor();
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/dashboard\/keys/);
    await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor();
    for (const name of ["Keys", "Usage", "Access rules", "Organization"]) await page.getByRole("navigation").getByRole("link", { name }).waitFor();
    await shot("02-keys-empty");
  });

  await scenario("security headers on every page", async () => {
    for (const path of ["/dashboard/sign-in", "/dashboard/accept", "/dashboard/keys", "/dashboard/usage", "/dashboard/access", "/dashboard/organization", "/oauth/authorize?x=1", "/mcp"]) {
      const res = await page.request.get(`${BASE}${path}`, { headers: { accept: "text/html" }, maxRedirects: 0 });
      if (!(res.headers()["content-type"] ?? "").startsWith("text/html")) continue;
      const csp = res.headers()["content-security-policy"] ?? "";
      assert.match(csp, /default-src '(self|none)'/, path);
      assert.doesNotMatch(csp, /unsafe-inline/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(res.headers()["referrer-policy"], "no-referrer", path);
    }
  });

  await scenario("create a key: secret shown once, gone after reload", async () => {
    // collapsed until asked for: the project already has its playground key
    const form = page.getByRole("region", { name: "Create a key" });
    assert.equal(await form.isVisible(), false, "the create-key form is open before it is asked for");
    await page.getByText("Create a key", { exact: true }).first().click();
    await form.getByLabel("Description", { exact: true }).fill("Browser key");
    await form.getByLabel("Expires after").fill("7");
    await form.getByLabel("Unit", { exact: true }).selectOption("day");
    await form.getByLabel("All-time limit (USD)").fill("25");
    await form.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    secret = await page.locator("#secret-value").inputValue();
    assert.match(secret, /^swb_/);
    const copyButton = dialog.getByRole("button", { name: "Copy", exact: true });
    await copyButton.click();
    await dialog.getByRole("button", { name: "Copied", exact: true }).waitFor({ timeout: 3000 });
    // the base URL and a ready curl command that works as shown
    assert.equal(await page.locator("#secret-base").inputValue(), `${BASE}/v1`);
    const curl = (await page.locator("#secret-curl").textContent()) ?? "";
    assert.ok(curl.startsWith(`curl ${BASE}/v1/chat/completions`) && curl.includes(secret), curl);
    assert.match((await page.locator("#secret-sdk").textContent()) ?? "", new RegExp(`OpenAI\\(base_url="${BASE}/v1", api_key="${secret}"\\)`));
    // async: the fake upstream answers from this very process
    const ran = await new Promise((resolve) => execFile("sh", ["-c", curl], { encoding: "utf8" }, (_err, stdout, stderr) => resolve({ stdout, stderr })));
    assert.equal(JSON.parse(ran.stdout).object, "chat.completion", `the dialog's curl command: ${ran.stdout} ${ran.stderr.slice(-300)}`);
    await shot("03-secret-once");
    await reloads(dialog.getByRole("button", { name: "Done" }));
    await page.locator("#flash").filter({ hasText: "Key “Browser key” is ready." }).waitFor();
    await keyRow("Browser key").waitFor();
    await page.reload();
    assert.equal((await page.content()).includes(secret), false, "secret visible after reload");
    assert.equal(page.url().includes(secret), false);
    await shot("04-keys-list");
  });

  await scenario("use the key through the API", async () => {
    const r = await chat(secret);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });

  await scenario("roll: new secret once, old secret refused at once", async () => {
    page.once("dialog", (d) => void d.accept());
    await keyRow("Browser key").getByRole("button", { name: "Roll" }).click();
    await page.getByRole("dialog").waitFor();
    rolled = await page.locator("#secret-value").inputValue();
    assert.notEqual(rolled, secret);
    await reloads(page.getByRole("dialog").getByRole("button", { name: "Done" }));
    assert.equal((await chat(secret)).status, 401);
    assert.equal((await chat(rolled)).status, 200);
  });

  await scenario("key editor: one form, one Save; two changed fields both kept; a summary of the changes", () => workbench.keyEditor(ctx));

  await scenario("playground key has neither Roll nor Delete", async () => {
    const row = page.locator("tr", { has: page.locator(".badge", { hasText: "playground" }) });
    await row.waitFor();
    assert.equal(await row.getByRole("button", { name: "Roll" }).count(), 0);
    assert.equal(await row.getByRole("button", { name: "Delete" }).count(), 0);
  });

  await scenario("disable, then re-enable with an expiry", async () => {
    await reloads(keyRow("Browser key").getByRole("button", { name: "Disable" }));
    await keyRow("Browser key").getByText("disabled").waitFor();
    assert.equal((await chat(rolled)).status, 401);
    await keyRow("Browser key").getByRole("link", { name: "Edit" }).click();
    await page.waitForURL(/edit=/);
    const editor = page.getByRole("region", { name: "Edit “Browser key”" });
    const when = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 16);
    await editor.getByLabel("Expires at (UTC)").fill(when);
    await shot("05a-key-editor");
    await reloads(editor.getByRole("button", { name: "Save changes" }));
    await page.locator("#flash.ok").filter({ hasText: "Saved: Expiry:" }).waitFor();
    await reloads(keyRow("Browser key").getByRole("button", { name: "Enable" }));
    await keyRow("Browser key").getByText("active", { exact: true }).waitFor();
    const expected = new Date(`${when}:00Z`).toLocaleString("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
    await keyRow("Browser key").getByText(expected, { exact: false }).first().waitFor();
    assert.equal((await chat(rolled)).status, 200);
    await shot("05-keys-after-enable");
  });

  let denial = "";
  await scenario("add a deny rule: the API answers 403 with its wording", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Access rules" }).click();
    await page.getByLabel("Key rules", { exact: true }).selectOption({ label: (await page.getByLabel("Key rules", { exact: true }).locator("option", { hasText: "Browser key" }).textContent()) ?? "" });
    await page.waitForURL(/key=/);
    await page.getByLabel("Rule type").selectOption("deny_models");
    await page.getByLabel("Search the catalogue").fill("gpt-4o-mini");
    await page.getByRole("button", { name: "Add model" }).click();
    assert.equal(await page.getByLabel("Models in this rule").inputValue(), "gpt-4o-mini");
    await shot("06-access-rule-form");
    await reloads(page.getByRole("button", { name: "Add rule" }));
    await page.locator("#flash").filter({ hasText: "Rule added." }).waitFor();
    const cell = page.locator("td .preview").first();
    await cell.waitFor();
    denial = (await cell.textContent()) ?? "";
    const r = await chat(rolled);
    assert.equal(r.status, 403);
    assert.equal(r.json.error.message, denial);
    assert.equal(denial, "Access denied: model 'gpt-4o-mini' is denied (deny_models), by an IAM rule on this API key.");
    await shot("07-access-rules");
  });

  await scenario("rule preview follows what is typed; unknown models refused when added; one name per rule type", () => dashboardScenarios.rulePreview(ctx));

  await scenario("the create-key form's example models are accepted", () => dashboardScenarios.exampleModels(ctx));

  await scenario("inline CIDR validation", async () => {
    await page.getByLabel("Rule type").selectOption("deny_ip_cidrs");
    await page.getByLabel("CIDRs").fill("10.0.0.0/8, 300.1.1.1/8");
    assert.equal(await page.getByLabel("CIDRs").getAttribute("aria-invalid"), "true");
    await page.getByText("Not a valid CIDR: 300.1.1.1/8").waitFor();
  });

  await scenario("traffic + cron show up in the usage chart", async () => {
    for (let i = 0; i < 4; i++) assert.equal((await chat(playgroundKey)).status, 200);
    await sleep(1500); // request logs reach D1 after LOG_FLUSH_MS
    const cron = await fetch(`${BASE}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
    assert.equal(cron.status, 200);
    await page.getByRole("navigation").getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    const requests = page.locator(".stat", { hasText: "Requests" }).locator(".value");
    const n = Number(await requests.textContent());
    assert.ok(n >= 5, `requests shown: ${n}`);
    const bars = await page.locator("figure", { hasText: "Requests" }).first().locator("rect").count();
    assert.ok(bars >= 1, "no bar in the requests chart");
    await shot("08-usage");
    await page.getByLabel("Granularity").selectOption("hour");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/granularity=hour/);
    assert.ok((await page.locator("figure", { hasText: "Requests" }).first().locator("rect").count()) >= 1);
    await shot("09-usage-hourly");
  });

  await scenario("usage rankings: refused requests under their own label, sortable, searchable, CSV; a reversed range keeps the form", () => dashboardScenarios.rankings(ctx));

  await scenario("requests page: from the top nav, rows with their columns, status filter, detail with routing; phone and dark", () => requestsPlatformScenarios.requestsPage(ctx));

  await scenario("request trace: failover on the timeline, conversation links, end-user filter, latency per model", () => traceScenarios.traceAndFilters(ctx));

  await scenario("change a setting (budget alert threshold)", () => organization.notificationSettings(ctx));

  await scenario("organization: invite a member, change their role", () => organization.inviteMember(authCtx));

  await scenario("organization: add a provider key (hint shown, token never)", () => organization.addProviderKey(ctx));

  await scenario("organization: add a custom provider (success message)", () => dashboardScenarios.customProvider(ctx));

  await scenario("organization: edit a provider key's token (hint changes, token never shown)", () => organization.editProviderKey(authCtx));

  await scenario("organization: remove a member from a team (gone after reload)", () => organization.removeTeamMember(ctx));

  await scenario("organization: rate limits and a member's spending limits save", () => requestsPlatformScenarios.organizationLimits(ctx));

  await scenario("organization: a project's routing defaults save; provider health per caller continent", () => routing.routingSection(ctx));

  await scenario("platform: a master key's secret once (Copy), revoked; the ledger shows the starting credits", () => requestsPlatformScenarios.platformPage(ctx));

  await scenario("keys: a key over its usage limit shows \"limit reached\", not active", () => requestsPlatformScenarios.keyLimitReached(ctx));

  await scenario("delete a key (confirm)", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Keys" }).click();
    page.once("dialog", (d) => void d.accept());
    await reloads(keyRow("Browser key").getByRole("button", { name: "Delete" }));
    await page.getByText("Browser key", { exact: true }).waitFor({ state: "detached" });
    assert.equal((await chat(rolled)).status, 401);
  });

  await scenario("every field has a label; keyboard-only key creation", async () => {
    for (const path of ["/dashboard/keys", "/dashboard/usage", "/dashboard/requests", "/dashboard/access", "/dashboard/organization", "/dashboard/platform", `/dashboard/keys?edit=${encodeURIComponent(await page.locator("tr[data-key-id]").first().getAttribute("data-key-id") ?? "")}`]) {
      await page.goto(`${BASE}${path}`);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
          .filter((el) => !(/** @type {HTMLInputElement} */ (el).labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby")))
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      assert.deepEqual(unlabelled, [], path);
      const nameless = await page.evaluate(() => [...document.querySelectorAll("button, a[href]")].filter((el) => !el.textContent?.trim() && !el.getAttribute("aria-label")).length);
      assert.equal(nameless, 0, `${path}: buttons or links without a name`);
    }
    await page.goto(`${BASE}/dashboard/keys`);
    // keyboard only: open the collapsed form from its button, then the first field is next
    await page.locator("summary", { hasText: "Create a key" }).focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Keyboard key");
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").waitFor();
    assert.match(await page.locator("#secret-value").inputValue(), /^swb_/);
    await Promise.all([page.waitForEvent("load"), page.keyboard.press("Escape")]);
    await keyRow("Keyboard key").waitFor();
  });

  await scenario("standards mode everywhere, top-bar links to /docs and /mcp, an HTML 404 page", () => dashboardScenarios.standardsMode(ctx));

  await scenario("dark theme: follows the system, and the top-bar toggle persists", () => dashboardScenarios.darkTheme(ctx));

  await scenario("keys table: pages of 50, search and sort", () => dashboardScenarios.keysPaging(ctx));

  await scenario("phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, path] of [["keys", "/dashboard/keys"], ["usage", "/dashboard/usage"], ["access", "/dashboard/access"], ["organization", "/dashboard/organization"], ["platform", "/dashboard/platform"], ["accept", "/dashboard/accept"]]) {
      await page.goto(`${BASE}${path}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${path} scrolls sideways by ${overflow}px: ${await requestsPlatformScenarios.sticking(page)}`);
      await shot(`11-phone-${name}`);
    }
    await dashboardScenarios.phoneNothingCut(ctx);
    await page.goto(`${BASE}/mcp`, { waitUntil: "load" });
    await shot("12-phone-mcp-setup");
    await page.setViewportSize({ width: 1360, height: 900 });
  });

  await scenario("/docs: styled by its own stylesheet, section links apart, no sideways scroll on a phone", () => dashboardScenarios.docsPage(ctx));

  await scenario("a signed-in owner opens another organization's hostile video link: no page, no script, no key", () => security.hostileVideoLink(authCtx));

  await scenario("single sign-on: configured by the owner, a new member signs in through a real OpenID provider", () => sso.singleSignOn(authCtx));
  await scenario("projects: create, rename, set the mode, delete; the Organization page in sections; empty charts say how to start", () => workbench.projects(ctx));

  await scenario("playground: a catalogue model, system prompt, parameters, streaming; cost and routing of each answer; a rule's 403", () => workbench.playground(ctx));

  await scenario("layout: top bar one row at 1366 px and compact on a phone; chart colours and labels; Requests stacked on a phone", () => workbench.layout(ctx));

  await scenario("screenshots of every page: light, dark, phone", () => workbench.screenshots(ctx));

  await scenario("sign out", async () => {
    await page.goto(`${BASE}/dashboard/keys`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/dashboard\/sign-in$/);
    await page.goto(`${BASE}/dashboard/keys`);
    assert.match(page.url(), /\/dashboard\/sign-in$/);
  });

  await scenario("OAuth sign-in and consent pages use the dashboard stylesheet", () => auth.oauthPages(authCtx));

  await scenario("accept a membership from the e-mailed link, then sign in", () => auth.acceptMembership(authCtx));

  await scenario("no console errors (CSP violations, script errors)", async () => {
    assert.deepEqual(consoleErrors.filter((e) => !/status of (400|401|403|409)/.test(e)), []);
  });

  await scenario("client JavaScript <= 100 KB gzip", async () => {
    const dir = join(ROOT, "public", "dashboard", "assets");
    const total = readdirSync(dir)
      .filter((f) => f.endsWith(".js"))
      .reduce((sum, f) => sum + gzipSync(readFileSync(join(dir, f))).length, 0);
    log(`client JS: ${total} bytes gzip`);
    assert.ok(total <= 100 * 1024);
  });

  await scenario("page render time (local, includes D1 and Durable Object I/O)", async () => {
    const signIn = await api("/api/auth/sign-in", { method: "POST", body: OWNER, headers: { origin: BASE } });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    for (const path of ["/dashboard/keys", "/dashboard/usage", "/dashboard/access", "/dashboard/organization"]) {
      const times = [];
      for (let i = 0; i < 8; i++) {
        const t0 = performance.now();
        const r = await fetch(`${BASE}${path}`, { headers: { cookie } });
        await r.text();
        assert.equal(r.status, 200);
        times.push(performance.now() - t0);
      }
      log(`${path}: best ${Math.min(...times).toFixed(1)} ms, median ${times.sort((a, b) => a - b)[4]?.toFixed(1)} ms wall time`);
    }
  });
} finally {
  await cleanup();
}

const failed = results.filter((r) => !r.ok);
log(`${results.length - failed.length}/${results.length} scenarios passed; screenshots in ${SHOTS}`);
for (const f of failed) log(`failed: ${f.name}: ${f.error}`);
process.exit(failed.length ? 1 : 0);

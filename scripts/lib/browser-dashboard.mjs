// @ts-check
/**
 * The browser scenarios of the dashboard and docs as a product, run in order by
 * scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @typedef {{ page: import("playwright-core").Page, BASE: string, SHOTS: string, OWNER: { email: string, password: string }, masterKey: string, playgroundKey: string, consoleErrors: string[], shot: (name: string) => Promise<unknown>, reloads: (target: import("playwright-core").Locator) => Promise<void>, keyRow: (description: string) => import("playwright-core").Locator, api: (path: string, o?: { method?: string, token?: string, body?: unknown, headers?: Record<string, string> }) => Promise<{ status: number, json: any, headers: Headers }>, chat: (token: string, model?: string) => Promise<{ status: number, json: any, headers: Headers }> }} Ctx */

/** rule preview follows what is typed; unknown models refused when added; one name per rule type @param {Ctx} ctx */
export async function rulePreview(ctx) {
  const { page, shot } = ctx;
  // one name per rule type: the menu reads it as words ("Allow models"), its value stays the API's id
  const labels = await page.getByLabel("Rule type").locator("option").evaluateAll((os) => os.map((o) => [/** @type {HTMLOptionElement} */ (o).value, o.textContent?.trim() ?? ""]));
  for (const [value, label] of labels) assert.ok(label.length > 0 && label !== value, `menu says "${label}" for ${value}`);
  assert.equal(labels.find(([v]) => v === "allow_models")?.[1], "Allow models");
  assert.equal(new Set(labels.map(([, l]) => l)).size, labels.length, "one name per rule type");
  await page.getByLabel("Rule type").selectOption("deny_models");
  await page.getByLabel("Models in this rule").fill("gpt-5, o3");
  const preview = page.locator("form p[data-preview]");
  assert.equal(await preview.textContent(), "Access denied: model 'gpt-5' is denied (deny_models), by an IAM rule on this API key.");
  await page.getByLabel("Rule type").selectOption("allow_models");
  assert.match((await preview.textContent()) ?? "", /^Access denied: model '(?!gpt-5'|o3')[^']+' is not in the allowed models \(allow_models\)/);
  await page.getByLabel("Rule type").selectOption("deny_providers");
  await page.getByLabel("Anthropic", { exact: true }).check();
  assert.match((await preview.textContent()) ?? "", /provider 'anthropic' is denied \(deny_providers\)/);
  await page.getByLabel("Anthropic", { exact: true }).uncheck();
  await page.getByLabel("Rule type").selectOption("deny_ip_cidrs");
  await page.getByLabel("CIDRs").fill("192.168.0.0/16");
  assert.match((await preview.textContent()) ?? "", /client IP 192\.168\.0\.0 is in a denied range/);
  await page.getByLabel("Rule type").selectOption("allow_ip_cidrs");
  await page.getByLabel("CIDRs").fill("203.0.113.0/24");
  assert.match((await preview.textContent()) ?? "", /client IP 198\.51\.100\.7 is not in the allowed ranges/);
  await page.getByLabel("CIDRs").fill("");
  // an unknown model is refused when added, with the server's wording
  await page.getByLabel("Rule type").selectOption("deny_models");
  await page.getByLabel("Models in this rule").fill("");
  await page.getByLabel("Search the catalogue").fill("claude-opus-0");
  await page.getByRole("button", { name: "Add model" }).click();
  await page.locator("#model-error").filter({ hasText: "'claude-opus-0' is not a known model" }).waitFor();
  assert.equal(await page.getByLabel("Models in this rule").inputValue(), "");
  await page.getByLabel("Models in this rule").fill("gpt-4o, not-a-model");
  await page.locator("#model-error").filter({ hasText: "'not-a-model' is not a known model" }).waitFor();
  assert.equal(await page.getByLabel("Models in this rule").getAttribute("aria-invalid"), "true");
  await shot("06b-access-unknown-model");
  await page.getByLabel("Models in this rule").fill("openai/gpt-4o");
  assert.equal(await page.getByLabel("Models in this rule").getAttribute("aria-invalid"), "false");
  // a wrapped denial message in the rules table: drawn as one block inside its cell, first line not clipped
  await page.setViewportSize({ width: 900, height: 900 });
  const cell = page.locator("td[data-label='Denial message']").first();
  const [td, msg] = [await cell.boundingBox(), await cell.locator(".preview").boundingBox()];
  assert.ok(td && msg && msg.y >= td.y && msg.height > 30, `denial message box ${JSON.stringify(msg)} in cell ${JSON.stringify(td)}`);
  assert.equal(await cell.locator(".preview").evaluate((el) => getComputedStyle(el).display), "block");
  await shot("07b-access-rules-wrapped");
  await page.setViewportSize({ width: 1360, height: 900 });
}

/** the create-key form's example models are accepted @param {Ctx} ctx */
export async function exampleModels(ctx) {
  const { page, keyRow, reloads } = ctx;
  await page.getByRole("navigation").getByRole("link", { name: "Keys" }).click();
  await page.locator("summary", { hasText: "Create a key" }).click();
  const field = page.getByLabel("Deny models (optional IAM rule)");
  const example = ((await field.getAttribute("placeholder")) ?? "").replace(/^e\.g\. /, "");
  assert.ok(example.includes(","), `placeholder: ${example}`);
  await field.fill("claude-opus-0");
  await page.locator("#new-deny-error").filter({ hasText: "'claude-opus-0' is not a known model" }).waitFor();
  const form = page.getByRole("region", { name: "Create a key" });
  await form.getByLabel("Description", { exact: true }).fill("Example key");
  await field.fill(example);
  assert.equal(await field.getAttribute("aria-invalid"), "false");
  await form.getByRole("button", { name: "Create key" }).click();
  await page.getByRole("dialog").waitFor();
  await reloads(page.getByRole("dialog").getByRole("button", { name: "Done" }));
  await keyRow("Example key").waitFor();
  page.once("dialog", (d) => void d.accept());
  await reloads(keyRow("Example key").getByRole("button", { name: "Delete" }));
  await page.getByRole("navigation").getByRole("link", { name: "Access rules" }).click();
}

/** usage rankings: refused requests under their own label, sortable, searchable, CSV; a reversed range keeps the form @param {Ctx} ctx */
export async function rankings(ctx) {
  const { page, BASE, shot, chat, playgroundKey } = ctx;
  const refused = await chat(playgroundKey, "not-a-model");
  assert.ok(refused.status >= 400, `unknown model answered ${refused.status}`);
  assert.equal((await fetch(`${BASE}/__scheduled?cron=${encodeURIComponent("* * * * *")}`)).status, 200);
  // The refused request's record reaches the hourly aggregates through the LOGS queue, whose
  // consumer waits up to max_batch_timeout (5 s in wrangler.jsonc) to fill a batch: a page loaded
  // once before that shows the ranking without it. Reload until it is there, as a person would.
  await page.goto(`${BASE}/dashboard/usage`);
  const providers = page.getByRole("table", { name: "Providers" });
  const models = page.getByRole("table", { name: "Models" });
  const refusedRow = providers.getByText("Refused (not sent to a provider)");
  for (let i = 0; i < 30 && (await refusedRow.count()) === 0; i++) {
    await sleep(1000);
    await page.reload();
  }
  await refusedRow.waitFor();
  assert.equal(await providers.getByText("Unknown", { exact: true }).count(), 0, "refused requests shown as provider Unknown");
  assert.equal(await models.getByText("not-a-model").count(), 0, "an id outside the catalogue ranked as a model");
  // sort by Requests, both ways
  const firstName = () => models.locator("tbody tr:not([hidden]) td[data-label=Name]").first().textContent();
  await models.getByRole("button", { name: "Requests" }).click();
  assert.equal(await models.locator("th[aria-sort=ascending]").count(), 1);
  const ascending = await firstName();
  await models.getByRole("button", { name: "Requests" }).click();
  assert.equal(await models.locator("th[aria-sort=descending]").count(), 1);
  assert.notEqual(await firstName(), ascending, "sorting did not change the order");
  // search
  await page.getByLabel("Search Models").fill("mini");
  const names = await models.locator("tbody tr:not([hidden]) td[data-label=Name]").allTextContents();
  assert.ok(names.length >= 1 && names.every((n) => /mini/i.test(n)), `search shows ${names}`);
  await page.getByLabel("Search Models").fill("");
  // CSV export with exact values
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export Models as CSV" }).click()]);
  assert.match(download.suggestedFilename(), /^usage-model-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = readFileSync(/** @type {string} */ (await download.path()), "utf8").trim().split(/\r\n/);
  assert.equal(csv[0], "#,Name,Requests,Tokens,Cost");
  assert.ok(csv.length >= 3 && csv.slice(1).every((l) => /^\d+,[^,]+,\d+,\d+,\d+(\.\d+)?$/.test(l)), csv.join("\n"));
  await shot("09a-usage-rankings");
  // a reversed range: the form again, with the reason
  await page.getByLabel("From (UTC)").fill("2026-03-10");
  await page.getByLabel("To (UTC)").fill("2026-03-01");
  await page.getByRole("button", { name: "Show" }).click();
  await page.getByRole("alert").filter({ hasText: "must not be after" }).waitFor();
  assert.equal(await page.getByLabel("From (UTC)").inputValue(), "2026-03-10");
  await shot("09b-usage-reversed-range");
}

/** organization: add a custom provider (success message) @param {Ctx} ctx */
export async function customProvider(ctx) {
  const { page, reloads } = ctx;
  const form = page.getByRole("region", { name: "Add a custom provider" });
  await form.getByLabel("Provider name").fill("browser-llm");
  await form.getByLabel("OpenAI-compatible base URL").fill("https://llm.example.com/v1");
  await form.getByLabel("API key of the provider").fill("sk-browser-custom-0123456789");
  await reloads(form.getByRole("button", { name: "Add custom provider" }));
  await page.locator("#flash").filter({ hasText: "Custom provider added." }).waitFor();
  const row = page.locator("tr", { has: page.getByText("browser-llm", { exact: true }) });
  page.once("dialog", (d) => void d.accept());
  await reloads(row.getByRole("button", { name: "Delete" }));
  await page.locator("#flash").filter({ hasText: "Deleted." }).waitFor();
}

/** standards mode everywhere, top-bar links to /docs and /mcp, an HTML 404 page @param {Ctx} ctx */
export async function standardsMode(ctx) {
  const { page, BASE, shot, consoleErrors } = ctx;
  for (const path of ["/dashboard/keys", "/dashboard/usage", "/dashboard/access", "/dashboard/organization", "/dashboard/accept", "/docs", "/mcp"]) {
    await page.goto(`${BASE}${path}`);
    assert.equal(await page.evaluate(() => document.compatMode), "CSS1Compat", `${path} renders in quirks mode`);
  }
  await page.goto(`${BASE}/dashboard/keys`);
  const top = page.locator("header.top");
  assert.equal(await top.getByRole("link", { name: "API docs" }).getAttribute("href"), "/docs");
  assert.equal(await top.getByRole("link", { name: "MCP" }).getAttribute("href"), "/mcp");
  const seen = consoleErrors.length;
  const res = await page.goto(`${BASE}/dashboard/nope`);
  assert.equal(res?.status(), 404);
  assert.match(res?.headers()["content-type"] ?? "", /^text\/html/);
  await page.getByRole("heading", { name: "Page not found", level: 1 }).waitFor();
  assert.equal(await page.evaluate(() => document.compatMode), "CSS1Compat");
  await shot("11a-dashboard-404");
  consoleErrors.splice(seen); // the 404 asked for
}

/** dark theme: follows the system, and the top-bar toggle persists @param {Ctx} ctx */
export async function darkTheme(ctx) {
  const { page, BASE, shot } = ctx;
  const bodyBg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const isDark = (/** @type {string} */ rgb) => (rgb.match(/\d+/g) ?? ["255"]).slice(0, 3).reduce((a, b) => a + Number(b), 0) < 200;
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto(`${BASE}/dashboard/usage`);
  assert.ok(isDark(await bodyBg()), `system dark not followed: ${await bodyBg()}`);
  await shot("11b-dark-usage");
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`${BASE}/dashboard/keys`);
  assert.ok(!isDark(await bodyBg()), "light page is dark");
  const toggle = page.getByRole("button", { name: "Dark mode" });
  assert.equal(await toggle.getAttribute("aria-pressed"), "false");
  await toggle.click();
  assert.equal(await toggle.getAttribute("aria-pressed"), "true");
  assert.ok(isDark(await bodyBg()), "toggle did not switch to dark");
  await page.goto(`${BASE}/dashboard/organization`);
  assert.ok(isDark(await bodyBg()), "dark choice not kept across pages");
  await shot("11c-dark-organization");
  await page.goto(`${BASE}/dashboard/access`);
  await shot("11d-dark-access");
  await page.getByRole("button", { name: "Dark mode" }).click();
  assert.ok(!isDark(await bodyBg()), "toggle did not switch back to light");
}

/** keys table: pages of 50, search and sort @param {Ctx} ctx */
export async function keysPaging(ctx) {
  const { page, BASE, shot, api, masterKey } = ctx;
  const projectId = (await api("/v1/master/projects", { token: masterKey })).json.projects[0].id;
  for (let i = 0; i < 52; i++) {
    const r = await api("/v1/master/keys", { method: "POST", token: masterKey, body: { projectId, description: `Bulk key ${String(i).padStart(2, "0")}` } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  }
  await page.goto(`${BASE}/dashboard/keys`);
  const tools = page.locator(".table-tools").first();
  await tools.getByText(/^1–50 of \d+$/).waitFor();
  assert.equal(await page.locator("tr[data-key-id]:not([hidden])").count(), 50);
  await tools.getByRole("button", { name: "Next page of API keys" }).click();
  await tools.getByText(/^51–\d+ of \d+$/).waitFor();
  await shot("11e-keys-page-2");
  await page.getByLabel("Search API keys").fill("Bulk key 07");
  assert.equal(await page.locator("tr[data-key-id]:not([hidden])").count(), 1);
  await page.getByLabel("Search API keys").fill("Bulk key");
  await page.getByRole("table", { name: "API keys" }).getByRole("button", { name: "Description" }).click();
  assert.equal(await page.locator("tr[data-key-id]:not([hidden]) strong").first().textContent(), "Bulk key 00");
  await page.getByRole("table", { name: "API keys" }).getByRole("button", { name: "Description" }).click();
  assert.equal(await page.locator("tr[data-key-id]:not([hidden]) strong").first().textContent(), "Bulk key 51");
}

/** /docs: styled by its own stylesheet, section links apart, no sideways scroll on a phone @param {Ctx} ctx */
export async function docsPage(ctx) {
  const { page, BASE, shot, SHOTS } = ctx;
  await page.goto(`${BASE}/docs`);
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).maxWidth), "72rem".replace("72rem", `${72 * 16}px`), "docs.css not applied");
  const links = page.locator("nav.tags a");
  const [a, b] = [await links.nth(0).boundingBox(), await links.nth(1).boundingBox()];
  assert.ok(a && b && (b.x > a.x + a.width + 4 || b.y > a.y), "section links run together");
  assert.equal(await page.locator("p").filter({ hasText: "`" }).count(), 0, "literal backticks");
  await shot("17-docs");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${BASE}/docs`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `/docs scrolls sideways by ${overflow}px`);
  await page.screenshot({ path: join(SHOTS, "17-phone-docs.png") });
  await page.setViewportSize({ width: 1360, height: 900 });
}
/** On a phone the member and team actions and the rankings' Cost lie inside the screen. @param {Ctx} ctx */
export async function phoneNothingCut(ctx) {
  const { page, BASE, OWNER, shot } = ctx;
  // Nothing cut off: the member and team actions and the rankings' Cost column lie inside the screen.
  const inside = async (/** @type {import("playwright-core").Locator} */ el, /** @type {string} */ what) => {
    await el.scrollIntoViewIfNeeded();
    const box = await el.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 391, `${what} is off screen: ${JSON.stringify(box)}`);
  };
  await page.goto(`${BASE}/dashboard/organization`);
  const owner = page.locator("tr", { has: page.getByText(OWNER.email, { exact: true }) }).first();
  await inside(owner.getByLabel(`Role of ${OWNER.email}`), "the role select");
  await inside(owner.getByRole("button", { name: "Save role" }), "Save role");
  await inside(page.locator("tr", { hasText: "dora@browser.test" }).first().getByRole("button", { name: "Remove", exact: true }), "Remove member");
  await inside(page.getByRole("button", { name: "Add to team" }).first(), "Add to team");
  await page.goto(`${BASE}/dashboard/usage`);
  await inside(page.locator("section", { hasText: "Models" }).locator("td[data-label=Cost]").first(), "the Cost column");
  await shot("11-phone-usage-rankings");
}

// @ts-check
/**
 * The browser scenarios of the request log, the platform page and limits, run in order by
 * scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */

/** A new key of the organization's first project, through the master API. @param {Ctx} ctx @param {Record<string, unknown>} body */
async function newKey(ctx, body) {
  const { api, masterKey } = ctx;
  const projectId = (await api("/v1/master/projects", { token: masterKey })).json.projects[0].id;
  const r = await api("/v1/master/keys", { method: "POST", token: masterKey, body: { projectId, ...body } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return /** @type {{ id: string, token: string }} */ (r.json.apiKey);
}

/** A chat request with a prompt of its own (an identical one is answered from the response cache: no cost, no routing). @param {Ctx} ctx @param {string} token */
const freshChat = (ctx, token, model = "gpt-4o-mini") =>
  ctx.api("/v1/chat/completions", { method: "POST", token, body: { model, messages: [{ role: "user", content: `Hello from the browser test ${crypto.randomUUID()}` }] } });

/** The elements that stick out of the viewport on the right, outermost or positioned (what may make a page scroll sideways). @param {import("playwright-core").Page} page */
export const sticking = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .filter((el) => /absolute|fixed/.test(getComputedStyle(el).position) || !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${[...el.classList].join(".")} (${Math.round(el.getBoundingClientRect().right)}px)`),
  );

/** requests page: rows with their columns, status filter, detail with routing, phone and dark @param {Ctx} ctx */
export async function requestsPage(ctx) {
  const { page, BASE, shot } = ctx;
  const key = await newKey(ctx, { description: "Requests key" });
  const ok = await freshChat(ctx, key.token);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  const refused = await freshChat(ctx, key.token, "not-a-model");
  assert.ok(refused.status >= 400 && refused.status < 500, `unknown model answered ${refused.status}`);

  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByRole("navigation").getByRole("link", { name: "Requests" }).click();
  await page.waitForURL(/\/dashboard\/requests/);
  await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor();
  const table = page.locator("table#requests");
  const rows = table.locator("tbody tr", { hasText: "Requests key" });
  for (let i = 0; i < 30 && (await rows.count()) < 2; i++) {
    await sleep(1000);
    await page.reload();
  }
  assert.equal(await rows.count(), 2, "the two requests of the key are not listed");
  const heads = (await table.locator("thead th").allTextContents()).map((h) => h.trim());
  for (const h of ["Time", "Key", "App", "Model", "Provider", "Status", "Cost"]) assert.ok(heads.includes(h), `no ${h} column: ${heads}`);
  const col = Object.fromEntries(heads.map((h, i) => [h, i]));
  const text = async (/** @type {import("playwright-core").Locator} */ row, /** @type {string} */ h) => ((await row.locator("td").nth(Number(col[h])).textContent()) ?? "").trim();
  const success = rows.filter({ has: page.locator("td", { hasText: /^200$/ }) });
  assert.equal(await success.count(), 1, "no row with status 200");
  assert.match(await text(success, "Time"), /\d{2}:\d{2}:\d{2} UTC$/);
  assert.equal(await text(success, "Key"), "Requests key");
  assert.ok((await text(success, "App")).length > 0, "empty App cell");
  assert.match(await text(success, "Model"), /gpt-4o-mini/);
  // The router may pick any provider of the model (ranking by price, health and the caller's continent).
  assert.match(await text(success, "Provider"), /^(openai|azure)$/);
  assert.match(await text(success, "Cost"), /^\$\d/);
  const failed = rows.filter({ has: page.locator("td", { hasText: /^4\d\d$/ }) });
  assert.equal(await failed.count(), 1, "no refused row");
  assert.equal(await text(failed, "Model"), "not-a-model");
  await shot("18-requests");

  // filter by status: failed only, then succeeded only
  await page.getByLabel("Status").selectOption("error");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/status=error/);
  const statuses = await table.locator("tbody tr td:nth-child(6)").allTextContents();
  assert.ok(statuses.length >= 1 && statuses.every((s) => Number(s) >= 400), `failed filter shows ${statuses}`);
  assert.equal(await rows.count(), 1);
  await page.getByLabel("Status").selectOption("ok");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/status=ok/);
  const oks = await table.locator("tbody tr td:nth-child(6)").allTextContents();
  assert.ok(oks.length >= 1 && oks.every((s) => Number(s) < 400), `succeeded filter shows ${oks}`);
  assert.equal(await rows.count(), 1);
  await shot("18a-requests-filtered");

  // the detail: summary, routing attempts, metadata
  await rows.first().getByRole("link").first().click();
  await page.waitForURL(/\/dashboard\/requests\/[^/?]+/);
  await page.getByRole("heading", { name: "Request", level: 1 }).waitFor();
  const summary = page.getByRole("region", { name: "Summary" });
  await summary.locator("tr", { hasText: "Key" }).getByText("Requests key").waitFor();
  assert.equal(((await summary.locator("tr", { has: page.locator("th", { hasText: /^Status$/ }) }).locator("td").textContent()) ?? "").trim(), "200");
  // The attempts sit on the request's timeline (after admission): the answered one names its provider.
  const routing = page.getByRole("region", { name: "Timeline and routing attempts" });
  const attempts = routing.locator('tbody tr[data-step="ok"]');
  assert.equal(await attempts.count(), 1, "no answered attempt on the timeline");
  assert.match(((await attempts.first().locator("td").nth(1).textContent()) ?? "").trim(), /^(openai|azure)( \([^)]+\))? · /);
  assert.equal(((await attempts.first().locator("td").nth(2).textContent()) ?? "").trim(), "answered");
  await page.getByRole("region", { name: "Metadata" }).waitFor();
  await shot("18b-request-detail");
  const detail = page.url();

  // phone width: no sideways scroll of the page; the key and cost cells can be brought on screen
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.goto(`${BASE}/dashboard/requests`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `/dashboard/requests scrolls sideways by ${overflow}px: ${await sticking(page)}`);
    for (const h of ["Key", "Cost"]) {
      const cell = rows.first().locator("td").nth(Number(col[h]));
      await cell.scrollIntoViewIfNeeded();
      const box = await cell.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 391, `the ${h} cell is off screen: ${JSON.stringify(box)}`);
      const clipped = await cell.evaluate((el) => el.scrollWidth > el.clientWidth + 1);
      assert.equal(clipped, false, `the ${h} cell's text is clipped`);
    }
    await page.evaluate(() => document.querySelector(".table-wrap")?.scrollTo({ left: 0 }));
    await shot("18c-phone-requests");
    await page.goto(detail);
    const o2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(o2 <= 1, `the request detail scrolls sideways by ${o2}px: ${await sticking(page)}`);
    await shot("18d-phone-request-detail");
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }

  // dark mode (following the system)
  await page.emulateMedia({ colorScheme: "dark" });
  try {
    await page.goto(`${BASE}/dashboard/requests`);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.ok((bg.match(/\d+/g) ?? ["255"]).slice(0, 3).reduce((a, b) => a + Number(b), 0) < 200, `not dark: ${bg}`);
    await shot("18e-dark-requests");
  } finally {
    await page.emulateMedia({ colorScheme: "light" });
  }
}

/** keys: a key over its usage limit shows "limit reached", not "active" @param {Ctx} ctx */
export async function keyLimitReached(ctx) {
  const { page, BASE, shot, keyRow } = ctx;
  const key = await newKey(ctx, { description: "Tiny limit key", usageLimit: "0.000001" });
  assert.equal((await freshChat(ctx, key.token)).status, 200, "the first request is admitted");
  // the spend is recorded a moment after the request; then the key is refused
  let refused = 0;
  for (let i = 0; i < 30 && refused !== 401; i++) {
    await sleep(1000);
    refused = (await freshChat(ctx, key.token)).status;
  }
  assert.equal(refused, 401, "the key over its limit is still admitted");
  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByLabel("Search API keys").fill("Tiny limit key");
  const row = keyRow("Tiny limit key");
  await row.waitFor();
  await row.locator(".badge.bad", { hasText: "limit reached" }).first().waitFor();
  assert.equal(await row.locator(".badge.ok", { hasText: "active" }).count(), 0, "the key over its limit is shown as active");
  await shot("19-keys-limit-reached");
}

/** platform: create a master key (secret once, Copy), revoke it; the ledger shows the starting credits @param {Ctx} ctx */
export async function platformPage(ctx) {
  const { page, BASE, shot, api } = ctx;
  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByRole("navigation").getByRole("link", { name: "Platform" }).click();
  await page.waitForURL(/\/dashboard\/platform/);
  await page.getByRole("heading", { name: "Platform", level: 1 }).waitFor();
  // the credit ledger: the organization started with $100
  const credits = page.getByRole("region", { name: "Credits" });
  assert.match((await credits.locator(".stat .value").first().textContent()) ?? "", /^\$\d/);
  const ledger = credits.getByRole("table", { name: "Credit ledger" });
  const first = ledger.locator("tbody tr").last();
  await first.waitFor();
  assert.match((await first.locator("td").nth(1).textContent()) ?? "", /^\+?\$100(\.00)?$/, "the starting top-up");
  assert.match((await first.locator("td").nth(2).textContent()) ?? "", /^\$100(\.00)?$/, "balance after the starting top-up");
  await shot("20-platform");

  // create a master key: the secret once, Copy says Copied, gone after the reload
  const keys = page.getByRole("region", { name: "Master keys" });
  await keys.getByLabel("Description of a new master key").fill("Browser master key");
  await keys.getByRole("button", { name: "Create master key" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  const secret = await page.locator("#secret-value").inputValue();
  assert.ok(secret.length >= 20, `secret: ${secret}`);
  await dialog.getByRole("button", { name: "Copy", exact: true }).click();
  await dialog.getByRole("button", { name: "Copied", exact: true }).waitFor({ timeout: 3000 });
  assert.equal((await api("/v1/master/organization", { token: secret })).status, 200, "the new master key does not work");
  // named for what it is, and no chat-completions snippets (a master key is refused there)
  await dialog.getByRole("heading", { name: "Copy your new master key" }).waitFor();
  assert.equal(await page.locator("#secret-curl").isVisible(), false, "a curl command for /v1/chat/completions shown for a master key");
  assert.equal((await api("/v1/chat/completions", { method: "POST", token: secret, body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] } })).status, 401);
  await shot("20a-platform-master-secret");
  await Promise.all([page.waitForEvent("load"), dialog.getByRole("button", { name: "Done" }).click()]);
  const row = keys.locator("tr", { hasText: "Browser master key" });
  await row.locator(".badge.ok", { hasText: "active" }).waitFor();
  assert.equal((await page.content()).includes(secret), false, "secret visible after reload");

  // revoke it: refused at once, shown revoked
  page.once("dialog", (d) => void d.accept());
  await Promise.all([page.waitForEvent("load"), row.getByRole("button", { name: /^Revoke/ }).click()]);
  await row.getByText(/^revoked/).waitFor();
  assert.equal(await row.getByRole("button", { name: /^Revoke/ }).count(), 0);
  assert.equal((await api("/v1/master/organization", { token: secret })).status, 401, "a revoked master key still works");
  await shot("20b-platform-master-revoked");
}

/** organization: rate limits and a member's spending limits save @param {Ctx} ctx */
export async function organizationLimits(ctx) {
  const { page, BASE, OWNER, shot, api, masterKey } = ctx;
  await page.goto(`${BASE}/dashboard/organization`);
  const rate = page.getByRole("form", { name: "Rate limits" });
  await rate.getByLabel("Requests per minute").fill("600");
  await rate.getByLabel("Tokens per minute").fill("200000");
  await Promise.all([page.waitForEvent("load"), rate.getByRole("button", { name: "Save rate limits" }).click()]);
  await page.locator("#flash.ok").filter({ hasText: /saved/i }).waitFor();
  assert.equal(await page.getByLabel("Requests per minute").inputValue(), "600");
  const org = (await api("/v1/master/organization", { token: masterKey })).json.organization;
  assert.equal(org.rateLimits.requestsPerMinute, 600, JSON.stringify(org.rateLimits));
  assert.equal(org.rateLimits.tokensPerMinute, 200000);
  await shot("21-organization-rate-limits");

  const limits = page.getByRole("form", { name: `Spending limits of ${OWNER.email}` });
  if ((await limits.count()) === 0) return;
  await limits.getByLabel("All-time (USD)").fill("500");
  await limits.getByLabel("Recurring (USD)").fill("50");
  await limits.getByLabel("Window length").fill("1");
  await limits.getByLabel("Window unit").selectOption("month");
  await Promise.all([page.waitForEvent("load"), limits.getByRole("button", { name: "Save limits" }).click()]);
  await page.locator("#flash.ok").filter({ hasText: /saved/i }).waitFor();
  const again = page.getByRole("form", { name: `Spending limits of ${OWNER.email}` });
  assert.match(await again.getByLabel("All-time (USD)").inputValue(), /^500(\.0+)?$/);
  assert.equal(await again.getByLabel("Window unit").inputValue(), "month");
  await again.scrollIntoViewIfNeeded();
  await shot("21a-organization-spending-limits");
  // put it back: empty fields clear the limits
  for (const f of ["All-time (USD)", "Recurring (USD)", "Window length"]) await again.getByLabel(f).fill("");
  await again.getByLabel("Window unit").selectOption("");
  await Promise.all([page.waitForEvent("load"), again.getByRole("button", { name: "Save limits" }).click()]);
  await page.locator("#flash.ok").waitFor();
  assert.equal(await page.getByRole("form", { name: `Spending limits of ${OWNER.email}` }).getByLabel("All-time (USD)").inputValue(), "");
}

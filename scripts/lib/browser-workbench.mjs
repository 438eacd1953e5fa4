// @ts-check
/**
 * Browser scenarios of the dashboard's working tools: the one-form key editor, projects managed in
 * the browser, the playground, and the layout checks (phone, dark mode, charts). Run in order by
 * scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */

/**
 * Light or dark whatever an earlier scenario left: the system preference and the toggle's stored
 * choice (`swb-theme`, which wins over the system's) both set; takes effect on the next load.
 * @param {import("playwright-core").Page} page @param {"light" | "dark"} scheme
 */
async function theme(page, scheme) {
  await page.emulateMedia({ colorScheme: scheme });
  await page.evaluate((t) => localStorage.setItem("swb-theme", t), scheme);
}

/** the key editor is one form: two fields changed, one Save, both kept, and the summary says so @param {Ctx} ctx */
export async function keyEditor(ctx) {
  const { page, BASE, api, masterKey, keyRow, reloads, shot } = ctx;
  await page.goto(`${BASE}/dashboard/keys`);
  await page.locator("summary", { hasText: "Create a key" }).click();
  const create = page.getByRole("region", { name: "Create a key" });
  await create.getByLabel("Description", { exact: true }).fill("Editor key");
  await create.getByRole("button", { name: "Create key" }).click();
  await page.getByRole("dialog").waitFor();
  await reloads(page.getByRole("dialog").getByRole("button", { name: "Done" }));
  await keyRow("Editor key").getByRole("link", { name: "Edit" }).click();
  await page.waitForURL(/edit=/);
  const editor = page.getByRole("region", { name: "Edit “Editor key”" });
  assert.equal(await editor.getByRole("button").count(), 1, "the editor has more than one button");
  await editor.getByLabel("Description").fill("Editor key renamed");
  await editor.getByLabel("All-time limit (USD)").fill("12.5");
  await editor.getByLabel("Requests per minute").fill("30");
  const pending = editor.locator("[data-changes]");
  assert.match((await pending.textContent()) ?? "", /Description: Editor key → Editor key renamed; All-time limit: no limit → 12\.5; Requests per minute: organization's → 30/);
  await shot("20-key-editor-one-form");
  await reloads(editor.getByRole("button", { name: "Save changes" }));
  await page.locator("#flash.ok").filter({ hasText: "Saved: Description: Editor key → Editor key renamed; All-time limit: no limit → 12.5; Requests per minute: organization's → 30." }).waitFor();
  const keys = await api("/v1/master/keys", { token: masterKey });
  const saved = keys.json.apiKeys.find((/** @type {{description: string}} */ k) => k.description === "Editor key renamed");
  assert.ok(saved, "the rename was lost");
  assert.equal(Number(saved.usageLimit), 12.5, "the limit was lost");
  // nothing changed: nothing sent, and the page says why (the editor is still open, under its new name)
  const renamed = page.getByRole("region", { name: "Edit “Editor key renamed”" });
  await renamed.getByRole("button", { name: "Save changes" }).click();
  await renamed.getByRole("alert").filter({ hasText: "Nothing to save" }).waitFor();
  // a recurring limit: the three fields travel together
  await renamed.getByLabel("Recurring limit (USD)").fill("3");
  await renamed.getByLabel("Window length").fill("1");
  await renamed.getByLabel("Window unit").selectOption("day");
  await reloads(renamed.getByRole("button", { name: "Save changes" }));
  await keyRow("Editor key renamed").getByText("/ $3", { exact: false }).first().waitFor();
  page.once("dialog", (d) => void d.accept());
  await reloads(keyRow("Editor key renamed").getByRole("button", { name: "Delete" }));
}

/** projects: create, rename and set the mode, delete; an empty project's charts say how to start @param {Ctx} ctx */
export async function projects(ctx) {
  const { page, BASE, api, masterKey, reloads, shot } = ctx;
  await page.goto(`${BASE}/dashboard/organization`);
  // the page in sections, with in-page navigation
  const onPage = page.getByRole("navigation", { name: "On this page" });
  for (const s of ["Settings", "Projects", "Members", "Provider keys"]) await onPage.getByRole("link", { name: s, exact: true }).waitFor();
  await onPage.getByRole("link", { name: "Projects", exact: true }).click();
  await page.waitForURL(/#projects$/);
  const section = page.getByRole("region", { name: "Projects" });
  await section.getByLabel("Project name").fill("Browser project");
  await section.getByLabel("Mode", { exact: true }).last().selectOption("hybrid");
  await reloads(section.getByRole("button", { name: "Create project" }));
  await page.locator("#flash.ok").filter({ hasText: "Project created" }).waitFor();
  const listed = (await api("/v1/master/projects", { token: masterKey })).json.projects.find((/** @type {{name: string}} */ p) => p.name === "Browser project");
  assert.ok(listed, "the project was not created");
  assert.equal(listed.mode, "hybrid");
  const row = page.locator(`tr[data-project-id="${listed.id}"]`);
  await row.getByLabel("Name").fill("Browser project renamed");
  await row.getByLabel("Mode").selectOption("api-keys");
  await shot("21-projects");
  await reloads(row.getByRole("button", { name: "Save" }));
  await page.locator("#flash.ok").filter({ hasText: "saved" }).waitFor();
  const after = (await api(`/v1/master/projects/${listed.id}`, { token: masterKey })).json.project;
  assert.equal(after.name, "Browser project renamed");
  assert.equal(after.mode, "api-keys");
  // a project without traffic: the charts say how to send a first request instead of an empty 0/0.5/1 axis
  await page.goto(`${BASE}/dashboard/usage?project=${listed.id}`);
  const empty = page.locator("figure.chart .chart-empty").first();
  await empty.waitFor();
  assert.match((await empty.textContent()) ?? "", /Send a first request/);
  assert.equal(await page.locator("figure.chart svg").count(), 0, "an empty chart still draws an axis");
  await shot("22-usage-empty-project");
  await page.goto(`${BASE}/dashboard/organization#projects`);
  page.once("dialog", (d) => void d.accept());
  await reloads(page.locator(`tr[data-project-id="${listed.id}"]`).getByRole("button", { name: /Delete/ }));
  await page.locator(`tr[data-project-id="${listed.id}"]`).waitFor({ state: "detached" });
  assert.equal((await api(`/v1/master/projects/${listed.id}`, { token: masterKey })).status, 404);
  // the default project has no Delete
  const defaultRow = page.locator("tr", { has: page.locator(".badge", { hasText: "default" }) });
  assert.equal(await defaultRow.getByRole("button", { name: /Delete/ }).count(), 0);
  // the rate-limits legend lies inside its fieldset
  const fieldset = page.locator("form", { has: page.getByRole("heading", { name: "Rate limits" }) }).locator("fieldset").first();
  const [fs, lg] = [await fieldset.boundingBox(), await fieldset.locator("legend").boundingBox()];
  assert.ok(fs && lg && lg.x >= fs.x && lg.x + lg.width <= fs.x + fs.width + 1, `legend ${JSON.stringify(lg)} outside ${JSON.stringify(fs)}`);
}

/** playground: pick a model, system prompt, parameters, streaming; cost and routing per answer; a rule's 403 @param {Ctx} ctx */
export async function playground(ctx) {
  const { page, BASE, api, masterKey, shot } = ctx;
  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Playground" }).click();
  await page.waitForURL(/\/dashboard\/playground/);
  await page.getByLabel("Model").selectOption("gpt-4o-mini");
  await page.getByLabel("System prompt").fill("Answer in one short sentence.");
  await page.getByLabel("Temperature").fill("0.3");
  await page.getByLabel("Max tokens").fill("64");
  await page.getByLabel("Message", { exact: true }).fill("Hello from the playground");
  await page.getByRole("button", { name: "Send" }).click();
  const answers = page.locator(".pg-msg.assistant");
  await answers.first().locator(".pg-meta").waitFor();
  const meta = (await answers.first().locator(".pg-meta").textContent()) ?? "";
  // whichever of the model's providers routing picked (OpenAI or Azure here) answered and is named
  const provider = /Hello from ([a-z-]+)\/gpt-4o-mini/.exec((await answers.first().locator(".pg-text").textContent()) ?? "")?.[1];
  assert.ok(provider, "no answer from the fake upstream");
  assert.match(meta, new RegExp(`Provider${provider}`));
  assert.match(meta, /Cost\$0\.\d+/);
  assert.match(meta, new RegExp(`Routing(.* → )?${provider}/gpt-4o-mini ✓ 200`));
  await answers.first().getByRole("link", { name: "Request details" }).waitFor();
  // not streamed, the same summary; the conversation keeps both turns
  await page.getByLabel("Stream the answer").uncheck();
  await page.getByLabel("Message", { exact: true }).fill("And again, without streaming");
  await page.getByRole("button", { name: "Send" }).click();
  await answers.nth(1).locator(".pg-meta").waitFor();
  assert.equal(await page.locator(".pg-msg.user").count(), 2);
  await shot("23-playground");
  // a rule on the playground key: the answer is the rule's 403 message
  const keys = await api("/v1/master/keys", { token: masterKey });
  const pg = keys.json.apiKeys.find((/** @type {{kind: string}} */ k) => k.kind === "playground");
  const rule = await api(`/v1/master/keys/${pg.id}/iam`, { method: "POST", token: masterKey, body: { ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } } });
  assert.equal(rule.status, 201, JSON.stringify(rule.json));
  await page.getByLabel("Message", { exact: true }).fill("Am I allowed?");
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator("#pg-error").filter({ hasText: "Access denied: model 'gpt-4o-mini' is denied (deny_models)" }).waitFor();
  await shot("23b-playground-denied");
  assert.equal((await api(`/v1/master/keys/${pg.id}/iam/${rule.json.rule?.id ?? rule.json.id}`, { method: "DELETE", token: masterKey })).status, 200);
}

const PAGES = [
  ["keys", "/dashboard/keys"],
  ["usage", "/dashboard/usage"],
  ["usage-hourly", "/dashboard/usage?granularity=hour"],
  ["requests", "/dashboard/requests"],
  ["playground", "/dashboard/playground"],
  ["access", "/dashboard/access"],
  ["organization", "/dashboard/organization"],
  ["platform", "/dashboard/platform"],
  ["audit-log", "/dashboard/audit-log"],
  ["docs", "/docs"],
  ["mcp", "/mcp"],
];

/** layout: top bar in one row at 1366 px and compact on a phone; chart colours and labels; Requests stacked on a phone @param {Ctx} ctx */
export async function layout(ctx) {
  const { page, BASE } = ctx;
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(`${BASE}/dashboard/keys`);
  const topHeight = async () => (await page.locator("header.top").boundingBox())?.height ?? 999;
  assert.ok((await topHeight()) <= 60, `top bar ${await topHeight()} px high at 1366 px (two rows?)`);
  // dark mode: the two series of a chart are told apart
  await theme(page, "dark");
  await page.goto(`${BASE}/dashboard/usage?granularity=hour`);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  const fills = await page.evaluate(() => {
    const fig = [...document.querySelectorAll(".legend i.bar, .legend i.bar2")].slice(0, 2);
    return fig.map((el) => getComputedStyle(el).backgroundColor);
  });
  assert.equal(fills.length, 2);
  assert.notEqual(fills[0], fills[1], "the two series share a colour in dark mode");
  // the hourly chart's last label ends inside the chart
  const cut = await page.evaluate(() =>
    [...document.querySelectorAll("figure.chart svg")].some((svg) => {
      const right = svg.getBoundingClientRect().right;
      return [...svg.querySelectorAll("text")].some((t) => t.getBoundingClientRect().right > right + 0.5);
    }),
  );
  assert.equal(cut, false, "a chart label runs past the chart's right edge");
  await theme(page, "light");
  // phone: a compact top bar, readable chart labels, the Requests table stacked with every column on screen
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${BASE}/dashboard/usage`);
  assert.ok((await topHeight()) <= 140, `top bar ${await topHeight()} px high on a phone`);
  const labelPx = await page.evaluate(() => Math.min(...[...document.querySelectorAll("figure.chart svg text")].map((t) => t.getBoundingClientRect().height).filter((h) => h > 0)));
  assert.ok(labelPx >= 9, `chart labels ${labelPx.toFixed(1)} px high on a phone`);
  // no two labels overlap, and none is cut at the chart's left edge (a long cost label)
  const problems = await page.evaluate(() =>
    [...document.querySelectorAll("figure.chart svg")].flatMap((svg) => {
      const edge = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll("text")].map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() })).filter((t) => t.r.height > 0);
      const out = texts.filter((t) => t.r.left < edge.left - 0.5).map((t) => `cut: ${t.text}`);
      texts.forEach((a, i) => texts.forEach((b, j) => {
        if (i < j && a.r.left < b.r.right - 0.5 && b.r.left < a.r.right - 0.5 && a.r.top < b.r.bottom - 0.5 && b.r.top < a.r.bottom - 0.5) out.push(`overlap: ${a.text} / ${b.text}`);
      }));
      return out;
    }),
  );
  assert.deepEqual(problems, [], "chart labels on a phone");
  await page.goto(`${BASE}/dashboard/requests`);
  const status = page.locator("table#requests td[data-label=Status]").first();
  await status.waitFor();
  const box = await status.boundingBox();
  assert.ok(box && box.x + box.width <= 390, `Status at ${JSON.stringify(box)} is off screen`);
  assert.equal(await page.locator("table#requests thead").isVisible(), false);
  await page.locator("table#requests td[data-label=Time] a").first().click();
  await page.waitForURL(/\/dashboard\/requests\//);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the request detail scrolls sideways by ${overflow}px`);
  await page.setViewportSize({ width: 1360, height: 900 });
}

/** every page light, dark and at phone width, for a person to look at @param {Ctx} ctx */
export async function screenshots(ctx) {
  const { page, BASE, SHOTS } = ctx;
  const { join } = await import("node:path");
  for (const [mode, width, scheme] of /** @type {const} */ ([["light", 1366, "light"], ["dark", 1366, "dark"], ["phone", 390, "light"], ["phone-dark", 390, "dark"]])) {
    await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
    await theme(page, scheme);
    for (const [name, path] of PAGES) {
      await page.goto(`${BASE}${path}`);
      await page.screenshot({ path: join(SHOTS, `40-${mode}-${name}.png`), fullPage: true });
    }
  }
  await theme(page, "light");
  await page.evaluate(() => localStorage.removeItem("swb-theme"));
  await page.setViewportSize({ width: 1360, height: 900 });
}

// @ts-check
/**
 * The browser scenario of a project's routing section and the provider health per caller continent
 * (Organization page), run by scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */

/** routing section: default preferences and the hybrid fallback saved; health per continent @param {Ctx} ctx */
export async function routingSection(ctx) {
  const { page, BASE, api, masterKey, playgroundKey, shot, reloads } = ctx;
  // A European caller's request, so the health table has an EU column and the project a region in use.
  const sent = await api("/v1/chat/completions", {
    method: "POST",
    token: playgroundKey,
    headers: { "x-debug-caller-continent": "EU" },
    body: { model: "gpt-4o-mini", messages: [{ role: "user", content: `Hello from the routing scenario ${crypto.randomUUID()}` }] },
  });
  assert.equal(sent.status, 200, JSON.stringify(sent.json));
  const projectId = (await api("/v1/master/projects", { token: masterKey })).json.projects[0].id;

  await page.goto(`${BASE}/dashboard/organization`);
  const form = page.locator("form", { has: page.getByRole("heading", { name: /^Routing: / }) });
  await form.waitFor();
  await form.getByLabel("Rank providers by").selectOption("latency");
  await form.getByLabel("Try first, in this order").fill("openai, azure");
  await form.getByLabel("Data use").selectOption("deny");
  const fallback = form.getByLabel(/use Switchboard's key/);
  if (await fallback.count()) await fallback.check();
  await reloads(form.getByRole("button", { name: "Save routing" }));
  await page.locator("#flash").filter({ hasText: "Routing defaults saved." }).waitFor();
  const project = (await api(`/v1/master/projects/${projectId}`, { token: masterKey })).json.project;
  assert.deepEqual(project.provider, { sort: "latency", order: ["openai", "azure"], allow_fallbacks: true, data_collection: "deny" });
  assert.equal(await form.getByLabel("Rank providers by").inputValue(), "latency");
  assert.equal(await form.getByLabel("Try first, in this order").inputValue(), "openai, azure");

  // Regions in use and provider health: the request above, from Europe.
  const health = page.locator("section", { has: page.getByRole("heading", { name: "Provider health by caller continent" }) });
  for (let i = 0; i < 20 && !(await health.locator("th", { hasText: /^EU$/ }).count()); i++) {
    await new Promise((r) => setTimeout(r, 500));
    await page.reload();
  }
  assert.equal(await health.locator("th", { hasText: /^EU$/ }).count(), 1, "no EU column in the health table");
  const euCells = (await health.locator("td[data-label='EU']").allTextContents()).map((t) => t.trim());
  assert.ok(euCells.some((t) => /^\d+\.\d% · /.test(t)), `no EU figures: ${euCells.join(" | ")}`);
  await form.scrollIntoViewIfNeeded();
  await shot("31-routing-section");
  await health.scrollIntoViewIfNeeded();
  await shot("31-provider-health");

  // Clear the defaults again (other scenarios route with none).
  await reloads(form.getByRole("button", { name: "Clear default preferences" }));
  assert.equal((await api(`/v1/master/projects/${projectId}`, { token: masterKey })).json.project.provider, null);
}

// @ts-check
/**
 * Browser scenarios of the request page as a trace, the Requests page's extra filters and the
 * Usage page's latency tables, run by scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */

/** the request page as a trace: timeline with a failover, conversation links, filters, latency tables @param {Ctx} ctx */
export async function traceAndFilters(ctx) {
  const { page, BASE, shot, api, masterKey } = ctx;
  const projectId = (await api("/v1/master/projects", { token: masterKey })).json.projects[0].id;
  const created = await api("/v1/master/keys", { method: "POST", token: masterKey, body: { projectId, description: "Trace key" } });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const token = created.json.apiKey.token;
  const session = `browser-${crypto.randomUUID().slice(0, 8)}`;
  const ask = (/** @type {string} */ content, /** @type {Record<string, unknown>} */ extra = {}) =>
    api("/v1/chat/completions", { method: "POST", token, headers: { "x-session-id": session }, body: { model: "llama-3.3-70b-instruct", messages: [{ role: "user", content }], ...extra } });
  // deepinfra is tried first (`provider.order`: whatever the live ranking says after the earlier
  // scenarios' traffic) and fails once: the answer comes from the next provider, after a failover.
  const first = await ask(`first turn ${crypto.randomUUID()} [[fake@deepinfra:status=500]]`, { user: "trace-user", provider: { order: ["deepinfra"] } });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const second = await ask(`second turn ${crypto.randomUUID()}`);
  assert.equal(second.status, 200, JSON.stringify(second.json));

  // Requests page: the end-user filter finds the first turn only.
  await page.goto(`${BASE}/dashboard/requests`);
  await page.getByLabel("End user").fill("trace-user");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/user=trace-user/);
  const rows = page.locator("table#requests tbody tr");
  for (let i = 0; i < 30 && (await rows.count()) < 1; i++) {
    await sleep(1000);
    await page.reload();
  }
  assert.equal(await rows.count(), 1, "the end-user filter does not show exactly the first turn");
  await shot("30-requests-filter-end-user");

  // The trace: admission, the failed attempt with its reason, the answered one with tokens and cost.
  await rows.first().getByRole("link").first().click();
  await page.waitForURL(/\/dashboard\/requests\/[^/?]+/);
  const trace = page.getByRole("region", { name: "Timeline and routing attempts" });
  await trace.waitFor();
  assert.ok((await trace.locator('tr[data-step="phase"]', { hasText: "Admission" }).count()) === 1, "no admission step");
  const failed = trace.locator('tr[data-step="bad"]');
  assert.equal(await failed.count(), 1, "the failed attempt is not on the timeline");
  assert.match((await failed.textContent()) ?? "", /deepinfra[\s\S]*HTTP 500/);
  const answered = trace.locator('tr[data-step="ok"]');
  assert.match((await answered.textContent()) ?? "", /answered[\s\S]*\d+ in · \d+ out[\s\S]*\$\d/);
  const bar = await answered.locator("svg.trace-bar").boundingBox();
  assert.ok(bar && bar.width > 50, `the timeline bar is not drawn: ${JSON.stringify(bar)}`);
  // The conversation: both turns, this one marked, the other linked.
  const conversation = page.getByRole("region", { name: "Conversation" });
  assert.equal(await conversation.locator("li").count(), 2, "the conversation does not list both turns");
  await conversation.locator('[aria-current="page"]').waitFor();
  await shot("31-request-trace");
  await conversation.getByRole("link").first().click();
  await page.waitForURL(/\/dashboard\/requests\/[^/?]+/);
  await page.getByRole("region", { name: "Conversation" }).locator('[aria-current="page"]').waitFor();

  // Usage: p50/p95 per model and provider (the consumer aggregates at once).
  await page.goto(`${BASE}/dashboard/usage`);
  const byModel = page.getByRole("region", { name: "Latency by model" });
  await byModel.waitFor();
  const llama = byModel.locator("tbody tr", { hasText: /Llama/i });
  assert.ok((await llama.count()) >= 1, "no latency row for the model");
  assert.match((await llama.first().locator('td[data-label="TTFT p50"]').textContent()) ?? "", /\d+ (ms|s)/);
  await page.getByRole("region", { name: "Latency by provider" }).scrollIntoViewIfNeeded();
  await shot("32-usage-latency");
}

// @ts-check
/**
 * The browser scenarios of the security findings, run by scripts/test-browser.mjs with its page and
 * helpers in `ctx`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

/** @typedef {import("./browser-dashboard.mjs").Ctx & { ADMIN_TOKEN: string, upstream: string, browserContext: import("playwright-core").BrowserContext }} Ctx */

/** a signed-in owner opens another organization's hostile video link: no page, no script, no key @param {Ctx} ctx */
export async function hostileVideoLink(ctx) {
  const { page, BASE, SHOTS, ADMIN_TOKEN, upstream, browserContext, masterKey, api } = ctx;
  // An admin of another organization points a BYOK key at a server it controls (the
  // fake upstream) and makes one job's content an HTML page whose <script> loads the other job's
  // content, served as text/javascript (`alert(document.domain)`), under the dashboard's origin.
  const evil = await api("/v1/admin/organizations", {
    method: "POST",
    token: ADMIN_TOKEN,
    body: { name: "Evil Co", plan: "enterprise", owner: { email: "mallory@evil.test", name: "Mallory", password: "mallory long password 1" } },
  });
  assert.equal(evil.status, 201, JSON.stringify(evil.json));
  const evilMaster = evil.json.masterKey.token;
  const pk = await api("/v1/master/provider-keys", { method: "POST", token: evilMaster, body: { provider: "openai", token: "byok-evil-0123456789", baseUrl: `${upstream}/openai` } });
  assert.equal(pk.status, 201, JSON.stringify(pk.json));
  const evilKey = await api("/v1/master/keys", { method: "POST", token: evilMaster, body: { projectId: evil.json.project.id, description: "evil" } });
  assert.equal(evilKey.status, 201, JSON.stringify(evilKey.json));
  const video = async (/** @type {string} */ prompt) => {
    const r = await api("/v1/videos", { method: "POST", token: evilKey.json.apiKey.token, body: { model: "sora-2", prompt, seconds: "4" } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return /** @type {string} */ (r.json.content_url);
  };
  const scriptUrl = await video("payload [[fake:video_type=text/javascript]]");
  const lure = await video(`lure [[fake:video_type=text/html; charset=utf-8,video_script=${new URL(scriptUrl).pathname}${new URL(scriptUrl).search}]]`);
  const keysBefore = (await api("/v1/master/keys", { token: masterKey })).json.apiKeys.length;
  const membersBefore = (await api("/v1/master/members", { token: masterKey })).json;

  // The owner is signed in (the session cookie goes along); a separate tab keeps the suite's
  // console checks to the dashboard's own pages.
  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor();
  const tab = await browserContext.newPage();
  /** @type {string[]} */
  const dialogs = [];
  tab.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    /** @type {Array<{ url: string, status: number, headers: Record<string, string>, rendered: number }>} */
    const seen = [];
    for (const url of [lure, scriptUrl]) {
      const res = await tab.goto(url);
      assert.ok(res, url);
      await tab.waitForTimeout(300);
      seen.push({ url, status: res.status(), headers: res.headers(), rendered: await tab.locator("h1", { hasText: "pwned" }).count() });
    }
    // Even embedded from a page of the dashboard's own origin, the script URL does not run.
    await tab.goto(`${BASE}/dashboard/keys`);
    await tab.evaluate((src) => new Promise((resolve) => {
      const s = document.createElement("script");
      s.src = src;
      s.onload = () => resolve("loaded");
      s.onerror = () => resolve("blocked");
      document.head.append(s);
    }), scriptUrl);
    await tab.waitForTimeout(300);
    assert.deepEqual(dialogs, [], "the upstream's script ran");
    for (const { url, status, headers, rendered } of seen) {
      assert.equal(rendered, 0, `the upstream's HTML was rendered: ${url}`);
      assert.equal(status, 502, url);
      assert.match(headers["content-type"] ?? "", /^application\/json/);
      assert.equal(headers["x-content-type-options"], "nosniff");
      assert.equal(headers["content-security-policy"], "default-src 'none'; sandbox");
    }
    await tab.screenshot({ path: join(SHOTS, "13-hostile-video-link.png"), fullPage: true });
  } finally {
    await tab.close();
  }
  assert.equal((await api("/v1/master/keys", { token: masterKey })).json.apiKeys.length, keysBefore, "a key was created");
  assert.deepEqual((await api("/v1/master/members", { token: masterKey })).json, membersBefore, "members changed");
}

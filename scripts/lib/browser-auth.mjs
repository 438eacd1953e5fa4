// @ts-check
/**
 * The browser scenarios of signing in elsewhere than the dashboard (OAuth pages) and of accepting
 * a membership, run by scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @typedef {import("./browser-dashboard.mjs").Ctx & { browserContext: import("playwright-core").BrowserContext, mailsTo: (address: string) => string[] }} Ctx */

/** OAuth sign-in and consent pages use the dashboard stylesheet @param {Ctx} ctx */
export async function oauthPages(ctx) {
  const { page, BASE, SHOTS, OWNER, api } = ctx;
  const reg = await api("/oauth/register", {
    method: "POST",
    body: { client_name: "Browser MCP client", redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "none" },
  });
  assert.equal(reg.status, 201, JSON.stringify(reg.json));
  const q = new URLSearchParams({
    response_type: "code",
    client_id: reg.json.client_id,
    redirect_uri: "http://127.0.0.1:9/callback",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "s1",
  });
  const fresh = page;
  await fresh.goto(`${BASE}/oauth/authorize?${q}`);
  await fresh.getByRole("heading", { name: /Sign in to connect/ }).waitFor();
  const styled = await fresh.evaluate(() => getComputedStyle(document.querySelector("main")).borderRadius);
  assert.notEqual(styled, "0px", "stylesheet not applied");
  await fresh.screenshot({ path: join(SHOTS, "13-oauth-sign-in.png"), fullPage: true });
  await fresh.getByLabel("Email").fill(OWNER.email);
  await fresh.getByLabel("Password").fill(OWNER.password);
  await fresh.getByRole("button", { name: "Sign in" }).click();
  await fresh.getByRole("heading", { name: /Authorize/ }).waitFor({ timeout: 10_000 }).catch(async (err) => {
    await fresh.screenshot({ path: join(SHOTS, "14-oauth-consent-failed.png"), fullPage: true });
    throw new Error(`${err}\n${(await fresh.locator("main").textContent()) ?? ""}`);
  });
  await fresh.screenshot({ path: join(SHOTS, "14-oauth-consent.png"), fullPage: true });
}

/** accept a membership from the e-mailed link, then sign in @param {Ctx} ctx */
export async function acceptMembership(ctx) {
  const { page, BASE, shot, api, masterKey, browserContext, mailsTo } = ctx;
  const email = "vera@browser.test";
  const added = await api("/v1/master/members", { method: "POST", token: masterKey, body: { email, name: "Vera Invited", role: "admin" } });
  assert.equal(added.status, 201, JSON.stringify(added.json));
  assert.equal(added.json.member.status, "pending");
  let link = "";
  for (let i = 0; i < 40 && !link; i++) {
    link = mailsTo(email).join("\n").match(/http\S+\/dashboard\/accept#token=\S+/)?.[0] ?? "";
    if (!link) await sleep(250);
  }
  assert.ok(link.startsWith(`${BASE}/dashboard/accept#token=`), `no invitation link in the e-mail: ${link}`);
  await browserContext?.clearCookies(); // the invited person, in a browser of their own
  /** @type {string[]} */
  const sent = [];
  page.on("request", (r) => sent.push(r.url()));
  await page.goto(link);
  await page.getByText("You are invited to").waitFor();
  assert.equal(await page.locator("#accept-org").textContent(), "Browser Co");
  assert.equal(await page.locator("#accept-role").textContent(), "admin");
  assert.equal(new URL(page.url()).hash, "", "token left in the address bar");
  const token = link.split("#token=")[1] ?? "";
  assert.ok(sent.every((u) => !u.includes(token)), "token sent in a URL");
  await shot("15-accept-membership");
  await page.getByLabel("Choose a password").fill("short");
  await page.getByRole("button", { name: "Accept membership" }).click();
  assert.equal(await page.getByLabel("Choose a password").evaluate((el) => /** @type {HTMLInputElement} */ (el).validity.valid), false);
  await page.getByLabel("Choose a password").fill("vera's own long password");
  await page.getByRole("button", { name: "Accept membership" }).click();
  await page.getByText("You are now a member of").waitFor();
  await shot("16-accept-done");
  await page.getByRole("link", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard\/sign-in/);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("vera's own long password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/dashboard\/keys/);
  await page.getByText(`${email} · admin`).waitFor();
  const list = await api("/v1/master/members", { token: masterKey });
  assert.equal(list.json.members.find((/** @type {{email: string}} */ m) => m.email === email)?.status, "active");
  // The link works once.
  await page.goto(link);
  await page.getByRole("alert").filter({ hasText: /invitation/i }).waitFor();
  await page.getByLabel("Invitation token").waitFor();
  await page.goto(`${BASE}/dashboard/keys`);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/dashboard\/sign-in$/);
}

// @ts-check
/**
 * Single sign-on in Chromium, end to end against a real OpenID provider (`oidc-provider`, started
 * by scripts/test-browser.mjs): the owner configures it on the Organization page, a person signs in
 * with "Sign in with SSO" through the provider's own login and consent pages and lands on the
 * dashboard as a new member; then SSO is required and the break-glass owner still signs in with
 * the password. Screenshots light, dark and at phone width.
 */
import assert from "node:assert/strict";
import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } from "../../test/oidc-provider/client.mjs";

/** @typedef {import("./browser-dashboard.mjs").Ctx & { browserContext: import("playwright-core").BrowserContext, oidcIssuer: string }} Ctx */

const DOMAIN = "sso.browser.test";

/** @param {Ctx} ctx */
export async function singleSignOn(ctx) {
  const { page, BASE, masterKey, api, shot, reloads, browserContext, oidcIssuer } = ctx;
  // The owner's section on the Organization page: save the provider's client there.
  await page.goto(`${BASE}/dashboard/organization`);
  const section = page.locator("section#sso");
  await section.getByLabel("Issuer URL").fill(oidcIssuer);
  await section.getByLabel("Client ID").fill(OIDC_CLIENT_ID);
  await section.getByLabel("Client secret").fill(OIDC_CLIENT_SECRET);
  await section.getByLabel("Allowed e-mail domains").fill(DOMAIN);
  await reloads(section.getByRole("button", { name: "Save single sign-on" }));
  await page.locator("section#sso").getByText("never shown again").first().waitFor();
  assert.equal((await page.content()).includes(OIDC_CLIENT_SECRET), false, "client secret visible on the page");
  await page.locator("section#sso").screenshot({ path: `${ctx.SHOTS}/30-sso-settings.png` });
  const saved = await api("/v1/master/sso", { token: masterKey });
  assert.equal(saved.json.sso.issuer, oidcIssuer, JSON.stringify(saved.json));

  // A person of that domain, signed out: through the provider's pages onto the dashboard.
  const ownerCookies = await browserContext.cookies();
  await browserContext.clearCookies();
  try {
    const email = `sam@${DOMAIN}`;
    await page.goto(`${BASE}/dashboard/sign-in`);
    await shot("31-sign-in-with-sso");
    // Dark as the system asks (an earlier scenario's toggle choice is set aside, then restored).
    const chosen = await page.evaluate(() => localStorage.getItem("swb-theme"));
    await page.evaluate(() => localStorage.removeItem("swb-theme"));
    await page.emulateMedia({ colorScheme: "dark" });
    await page.reload();
    await shot("31-sign-in-with-sso-dark");
    await page.emulateMedia({ colorScheme: "light" });
    await page.evaluate((t) => (t ? localStorage.setItem("swb-theme", t) : undefined), chosen);
    await page.setViewportSize({ width: 390, height: 844 });
    await shot("31-sign-in-with-sso-phone");
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.getByLabel("Work e-mail").fill(email);
    const atProvider = ctx.consoleErrors.length;
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.waitForURL((u) => u.href.startsWith(oidcIssuer));
    await page.locator('input[name="password"]').fill("any password");
    await shot("32-provider-login");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(/\/dashboard\/keys/, { timeout: 15_000 });
    // The provider's own pages load its fonts from the internet (unreachable here) and have no
    // favicon: those messages are not the dashboard's console errors.
    const provider = ctx.consoleErrors.splice(atProvider);
    ctx.consoleErrors.push(...provider.filter((e) => !/^Failed to load resource|^404 /.test(e) || e.includes(BASE)));
    await page.getByText(`${email} · developer`).waitFor();
    await shot("33-signed-in-with-sso");

    // SSO required: the break-glass owner still signs in with the password.
    const required = await api("/v1/master/sso", { method: "PUT", token: masterKey, body: { issuer: oidcIssuer, clientId: OIDC_CLIENT_ID, allowedDomains: [DOMAIN], defaultRole: "developer", required: true } });
    assert.equal(required.status, 200, JSON.stringify(required.json));
    await browserContext.clearCookies();
    await page.goto(`${BASE}/dashboard/sign-in`);
    await page.getByLabel("Email").fill(ctx.OWNER.email);
    await page.getByLabel("Password").fill(ctx.OWNER.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(/\/dashboard\/keys/);
  } finally {
    await api("/v1/master/sso", { method: "DELETE", token: masterKey });
    await browserContext.clearCookies();
    await browserContext.addCookies(ownerCookies);
  }
}

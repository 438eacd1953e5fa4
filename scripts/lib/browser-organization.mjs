// @ts-check
/**
 * The browser scenarios of the Organization page's settings, members, teams and provider keys, run
 * by scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */
/** @typedef {Ctx & { mailsTo: (address: string) => string[], upstream: string }} AuthCtx */

/** change a setting (budget alert threshold) @param {Ctx} ctx */
export async function notificationSettings(ctx) {
  const { page, api, masterKey, shot, reloads } = ctx;
  await page.getByRole("navigation").getByRole("link", { name: "Organization" }).click();
  await page.getByLabel("Alert threshold (%)").fill("90");
  await reloads(page.getByRole("button", { name: "Save notifications" }));
  await page.locator("#flash.ok").filter({ hasText: "Notification settings saved." }).waitFor();
  await shot("10a-organization-saved");
  await page.reload();
  assert.equal(await page.locator("#flash").textContent(), "", "the success message outlived its reload");
  assert.equal(await page.getByLabel("Alert threshold (%)").inputValue(), "90");
  const org = await api("/v1/master/organization", { token: masterKey });
  assert.equal(org.json.organization.notifications.thresholdPercent, 90);
  await shot("10-organization");
}

/** organization: invite a member, change their role @param {AuthCtx} ctx */
export async function inviteMember(ctx) {
  const { page, api, masterKey, OWNER, reloads, mailsTo } = ctx;
  const email = "dora@browser.test";
  const invite = page.getByRole("region", { name: "Invite a member" });
  await invite.getByLabel("Email").fill(email);
  await invite.getByLabel("Name").fill("Dora Dev");
  await invite.getByLabel("Role").selectOption("developer");
  await reloads(invite.getByRole("button", { name: "Invite member" }));
  await page.locator("#flash").filter({ hasText: "Invitation sent" }).waitFor();
  const row = page.locator("tr", { has: page.getByText(email, { exact: true }) });
  await row.getByText("pending").waitFor();
  assert.ok(mailsTo(email).some((m) => m.includes("/dashboard/accept#token=")), "no invitation e-mail");
  await page.getByLabel(`Role of ${email}`).selectOption("admin");
  await reloads(row.getByRole("button", { name: "Save role" }));
  assert.equal(await page.getByLabel(`Role of ${email}`).inputValue(), "admin");
  const list = await api("/v1/master/members", { token: masterKey });
  assert.equal(list.json.members.find((/** @type {{email: string}} */ m) => m.email === email)?.role, "admin");
  // An owner's role cannot be taken away from the last owner: the page shows the API's answer.
  await page.getByLabel(`Role of ${OWNER.email}`).selectOption("developer");
  await page.locator("tr", { has: page.getByText(OWNER.email, { exact: true }) }).getByRole("button", { name: "Save role" }).click();
  await page.locator("#flash").filter({ hasText: "at least one owner" }).waitFor();
}

/** organization: add a provider key (hint shown, token never) @param {Ctx} ctx */
export async function addProviderKey(ctx) {
  const { page, api, masterKey, shot, reloads } = ctx;
  const token = "sk-browser-provider-key-0123456789abcdef";
  await page.reload();
  const form = page.getByRole("region", { name: "Add a provider key" });
  await form.getByLabel("Provider", { exact: true }).selectOption("openai");
  await form.getByLabel("Provider API key").fill(token);
  await form.getByLabel("Label (optional)").fill("Browser BYOK");
  await reloads(form.getByRole("button", { name: "Add provider key" }));
  await page.locator("#flash").filter({ hasText: "Provider key added." }).waitFor();
  const row = page.locator("tr", { has: page.getByText("Browser BYOK", { exact: true }) });
  await row.waitFor();
  const hint = (await row.locator("code").first().textContent()) ?? "";
  assert.ok(hint.length > 0 && !hint.includes(token), `hint: ${hint}`);
  assert.equal((await page.content()).includes(token), false, "provider token visible on the page");
  assert.equal(await form.getByLabel("Provider API key").inputValue(), "");
  await shot("10b-organization-admin");
  const keys = await api("/v1/master/provider-keys", { token: masterKey });
  assert.equal(keys.json.providerKeys[0].tokenHint, hint);
  page.once("dialog", (d) => void d.accept());
  await reloads(row.getByRole("button", { name: "Delete" }));
  await page.getByText("Browser BYOK", { exact: true }).waitFor({ state: "detached" });
  await page.locator("#flash").filter({ hasText: "Deleted." }).waitFor();
}

/** organization: edit a provider key's token (hint changes, token never shown) @param {AuthCtx} ctx */
export async function editProviderKey(ctx) {
  const { page, api, masterKey, playgroundKey, shot, upstream } = ctx;
  const [before, after] = ["sk-browser-edit-before-0123456789-aaaa", "sk-browser-edit-after-0123456789-zzzz"];
  const created = await api("/v1/master/provider-keys", { method: "POST", token: masterKey, body: { provider: "openai", token: before, label: "Browser edit" } });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const sentAuth = async (/** @type {string} */ tag) => {
    const r = await api("/v1/chat/completions", { method: "POST", token: playgroundKey, body: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `edit [[tag:${tag}]]` }] } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return (await (await fetch(`${upstream}/__recorded/${tag}`)).json()).at(-1)?.headers.authorization;
  };
  assert.equal(await sentAuth("browser-pk-before"), `Bearer ${before}`);
  await page.reload();
  const row = page.locator("tr", { has: page.getByText("Browser edit", { exact: true }) });
  assert.equal(await row.locator("code").first().textContent(), "…aaaa");
  // Keyboard only: open the Edit disclosure, type the new token, submit with Enter.
  await row.locator("summary").focus();
  await page.keyboard.press("Enter");
  const field = row.getByLabel("New token (optional)");
  await field.waitFor();
  await field.focus();
  await page.keyboard.type(after);
  await shot("10c-provider-key-edit");
  await Promise.all([page.waitForEvent("load"), page.keyboard.press("Enter")]);
  await row.locator("code").filter({ hasText: "…zzzz" }).waitFor();
  assert.equal(await row.getByLabel("New token (optional)").inputValue(), "");
  const html = await page.content();
  assert.ok(!html.includes(after) && !html.includes(before), "provider token visible on the page");
  const keys = await api("/v1/master/provider-keys", { token: masterKey });
  assert.equal(keys.json.providerKeys.find((/** @type {{id: string}} */ k) => k.id === created.json.providerKey.id)?.tokenHint, "…zzzz");
  assert.equal(await sentAuth("browser-pk-after"), `Bearer ${after}`, "the next request still used the old token");
  assert.equal((await api(`/v1/master/provider-keys/${created.json.providerKey.id}`, { method: "DELETE", token: masterKey })).status, 200);
}

/** organization: remove a member from a team (gone after reload) @param {Ctx} ctx */
export async function removeTeamMember(ctx) {
  const { page, api, masterKey, OWNER, shot, reloads } = ctx;
  const dora = "dora@browser.test";
  const team = await api("/v1/master/teams", { method: "POST", token: masterKey, body: { name: "Browser team" } });
  assert.equal(team.status, 201, JSON.stringify(team.json));
  for (const member of [OWNER.email, dora]) assert.equal((await api(`/v1/master/teams/${team.json.team.id}/members`, { method: "POST", token: masterKey, body: { member } })).status, 201);
  await page.reload();
  const list = page.locator("tr", { has: page.getByText("Browser team", { exact: true }) }).locator(".member-list");
  await list.getByText(dora, { exact: true }).waitFor();
  await shot("10d-team-members");
  page.once("dialog", (d) => void d.accept());
  await reloads(list.getByRole("button", { name: `Remove ${dora} from Browser team` }));
  await page.reload();
  await list.getByText(OWNER.email, { exact: true }).waitFor();
  assert.equal(await list.getByText(dora, { exact: true }).count(), 0, "removed member still listed");
  assert.equal((await api(`/v1/master/teams/${team.json.team.id}`, { token: masterKey })).json.team.memberIds.length, 1);
}

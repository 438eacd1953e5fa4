// @ts-check
/**
 * Browser scenarios of the dashboard's working tools: the one-form key editor, projects managed in
 * the browser, the playground, and the layout checks (phone, dark mode, charts). Run in order by
 * scripts/test-browser.mjs with its page and helpers in `ctx`.
 */
import assert from "node:assert/strict";

/** @typedef {import("./browser-dashboard.mjs").Ctx} Ctx */

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
  // nothing changed: nothing sent, and the page says why
  await editor.getByRole("button", { name: "Save changes" }).click();
  await editor.getByRole("alert").filter({ hasText: "Nothing to save" }).waitFor();
  // a recurring limit: the three fields travel together
  await editor.getByLabel("Recurring limit (USD)").fill("3");
  await editor.getByLabel("Window length").fill("1");
  await editor.getByLabel("Window unit").selectOption("day");
  await reloads(editor.getByRole("button", { name: "Save changes" }));
  await keyRow("Editor key renamed").getByText("/ $3", { exact: false }).first().waitFor();
  page.once("dialog", (d) => void d.accept());
  await reloads(keyRow("Editor key renamed").getByRole("button", { name: "Delete" }));
}

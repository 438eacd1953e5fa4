/**
 * The dashboard's organization switcher lists only what the session's
 * credential opens. Before the fix it listed every membership of the account, so an organization
 * that squatted an address (created the account with its own password) and signed in as it saw
 * the name and id of another organization that had invited the same address.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { signIn, type Session } from "../dashboard/session";
import { accept, captureMail, email, tokenFor } from "../helpers/mail";

captureMail();

const page = (s: Session, path: string) => call(path, { headers: { cookie: s.cookie } });
const addMember = (masterKey: string, body: Record<string, unknown>) => call("/v1/master/members", { method: "POST", key: masterKey, ...json(body) });

describe("the organization switcher", () => {
  it("a squatter signed in with its own chosen password does not see the organization that invited the address", async () => {
    const victimOrg = await seedOrg({ name: "Victim Org Name" });
    const squatter = await seedOrg({ name: "Squatter Org" });
    const v = email("squatted");
    expect((await addMember(squatter.masterKey, { email: v, name: "Planted", role: "owner", password: "squatter chosen password" })).status).toBe(201);
    expect((await addMember(victimOrg.masterKey, { email: v, name: "Real person", role: "admin" })).status).toBe(201);

    const s = await signIn(v, "squatter chosen password");
    const html = await (await page(s, "/dashboard/keys")).text();
    expect(html).not.toContain(victimOrg.orgId);
    expect(html).not.toContain("Victim Org Name");
    // The OAuth consent page's organization list follows the same rule (it already did).
  });

  it("a person with their own password sees a pending organization only once they accept it", async () => {
    const home = await seedOrg({ name: "Home Org" });
    const inviter = await seedOrg({ name: "Inviting Org" });
    expect((await addMember(inviter.masterKey, { email: home.ownerEmail, name: "Guest", role: "developer" })).status).toBe(201);

    const before = await (await page(await signIn(home.ownerEmail, home.ownerPassword), "/dashboard/keys")).text();
    expect(before).not.toContain(inviter.orgId);
    expect(before).not.toContain("Inviting Org");

    expect((await accept(tokenFor(home.ownerEmail))).status).toBe(200);
    const after = await (await page(await signIn(home.ownerEmail, home.ownerPassword), "/dashboard/keys")).text();
    expect(after).toContain(`<option value="${inviter.orgId}">Inviting Org</option>`);
  });
});

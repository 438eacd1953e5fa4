/**
 * An organization that creates the account of a new address with a password it
 * chose, and signs in as it, must not count as accepted. Before the fix that first sign-in
 * accepted the membership, so the organization's budget alerts were e-mailed to the address, and
 * once the real person set their own password (accepting another organization's invitation) that
 * password opened the squatter's organization too. Only the e-mailed token accepts.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { budgetAlertRecipients } from "../../src/billing/budget-alerts";
import { accept, captureMail, email, tokenFor } from "../helpers/mail";

captureMail();

const SQUATTER_PW = "squatter chosen password";
const addMember = (org: SeededOrg, body: Record<string, unknown>) => call("/v1/master/members", { method: "POST", key: org.masterKey, ...json(body) });
const signIn = (addr: string, password: string, organizationId?: string) =>
  call("/api/auth/sign-in", { method: "POST", ...json({ email: addr, password, ...(organizationId ? { organizationId } : {}) }) });

async function statusIn(org: SeededOrg, addr: string): Promise<unknown> {
  const list = (await (await call("/v1/master/members", { key: org.masterKey })).json()) as { members: Array<{ email: string; status: string }> };
  return list.members.find((m) => m.email === addr)?.status;
}

describe("a squatted address", () => {
  it("signing in with the organization's chosen password accepts nothing and brings no e-mail", async () => {
    const squatter = await seedOrg();
    const v = email("squat");
    expect((await addMember(squatter, { email: v, name: "Planted", role: "admin", password: SQUATTER_PW })).status).toBe(201);
    // The organization's password still opens that organization (its own business)...
    expect((await signIn(v, SQUATTER_PW, squatter.orgId)).status).toBe(200);
    expect((await signIn(v, SQUATTER_PW)).status).toBe(200);
    // ...but the membership stays pending and the address gets no budget alert.
    expect(await statusIn(squatter, v)).toBe("pending");
    expect(await budgetAlertRecipients(env, squatter.orgId)).toEqual([squatter.ownerEmail]);
  });

  it("the real person's own password, set when accepting another invitation, does not open the squatter's organization", async () => {
    const squatter = await seedOrg();
    const real = await seedOrg();
    const v = email("victim");
    await addMember(squatter, { email: v, name: "Planted", role: "admin", password: SQUATTER_PW });
    expect((await signIn(v, SQUATTER_PW, squatter.orgId)).status).toBe(200);
    const squatterToken = tokenFor(v); // the squatter's own invitation also went to the real address

    await addMember(real, { email: v, name: "Vera", role: "developer" });
    const own = "the real person's own password";
    expect((await accept(tokenFor(v), own)).status).toBe(200);

    expect((await signIn(v, own, real.orgId)).status).toBe(200);
    expect((await signIn(v, own, squatter.orgId)).status).toBe(401);
    expect((await signIn(v, SQUATTER_PW, squatter.orgId)).status).toBe(401);
    expect(await budgetAlertRecipients(env, squatter.orgId)).toEqual([squatter.ownerEmail]);
    expect(await statusIn(squatter, v)).toBe("pending");

    // The e-mailed token (only the address's owner has it) is what accepts.
    expect((await accept(squatterToken)).status).toBe(200);
    expect((await signIn(v, own, squatter.orgId)).status).toBe(200);
    expect(await statusIn(squatter, v)).toBe("active");
  });
});

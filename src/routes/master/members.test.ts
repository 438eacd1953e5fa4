import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
interface MemberBody {
  member: { id: string; email: string; name: string; role: string; status: string };
}

describe("master API: members", () => {
  it("adds members, reuses users by e-mail across organizations, refuses duplicates", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: email.toUpperCase(), name: "Dev", role: "developer", password: "long-enough-password" }) });
    expect(res.status).toBe(201);
    const { member } = (await res.json()) as MemberBody;
    expect(member).toMatchObject({ email, name: "Dev", role: "developer", id: expect.stringMatching(/^mem_/) });
    expect(JSON.stringify(member)).not.toMatch(/password|pbkdf2/i);

    const dup = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "Dev", role: "admin" }) });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as ErrorBody).error).toMatchObject({ code: "member_exists", param: "email" });

    const elsewhere = await call("/v1/master/members", { method: "POST", key: other.masterKey, ...json({ email, name: "Dev", role: "admin" }) });
    expect(elsewhere.status).toBe(201);
    // Same answer as for a new e-mail: no account id, pending (contract section 5).
    const other2 = ((await elsewhere.json()) as MemberBody).member;
    expect(other2).not.toHaveProperty("userId");
    expect(other2).toMatchObject({ name: "Dev", role: "admin", status: "pending" });

    const list = (await (await call("/v1/master/members", { key: org.masterKey })).json()) as { members: Array<{ id: string; role: string }> };
    expect(list.members.map((m) => [m.id, m.role])).toEqual([
      [org.ownerMemberId, "owner"],
      [member.id, "developer"],
    ]);
    // Lookup by e-mail or id, scoped to the organization.
    expect((await call(`/v1/master/members/${encodeURIComponent(email)}`, { key: org.masterKey })).status).toBe(200);
    expect((await call(`/v1/master/members/${org.ownerMemberId}`, { key: other.masterKey })).status).toBe(404);
  });

  it("validates bodies with 400 + param", async () => {
    const org = await seedOrg();
    for (const [body, param] of [
      [{ name: "x", role: "developer" }, "email"],
      [{ email: "nope", name: "x", role: "developer" }, "email"],
      [{ email: "a@example.test", name: "x", role: "root" }, "role"],
      [{ email: "a@example.test", name: "x", role: "admin", password: "short" }, "password"],
    ] as const) {
      const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json(body) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.param).toBe(param);
    }
  });
});

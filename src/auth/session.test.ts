import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../../test/helpers/fixtures";
import { createSession, destroySession, readSession, sessionTokenFromCookie, SESSION_TTL_MS } from "./session";

describe("dashboard sessions", () => {
  it("creates, reads and destroys a session", async () => {
    const org = await seedOrg();
    const row = await env.DB.prepare("SELECT user_id FROM members WHERE id = ?").bind(org.ownerMemberId).first<{ user_id: string }>();
    const s = await createSession(env, { userId: row!.user_id, organizationId: org.orgId, memberId: org.ownerMemberId });
    expect(s.cookie).toMatch(/^swb_session=[A-Za-z0-9]{48}; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+$/);
    const info = await readSession(env, `a=b; swb_session=${s.token}`);
    expect(info).toMatchObject({ userId: row!.user_id, organizationId: org.orgId, memberId: org.ownerMemberId, role: "owner", email: org.ownerEmail, csrfToken: s.csrfToken });
    expect(await readSession(env, `swb_session=${s.token}`, Date.now() + SESSION_TTL_MS + 1)).toBeNull();
    await destroySession(env, `swb_session=${s.token}`);
    expect(await readSession(env, `swb_session=${s.token}`)).toBeNull();
  });

  it("ignores missing and malformed cookies", async () => {
    expect(await readSession(env, undefined)).toBeNull();
    expect(await readSession(env, "swb_session=short")).toBeNull();
    expect(sessionTokenFromCookie("x=1; swb_session=<script>")).toBeNull();
    expect(sessionTokenFromCookie(`swb_session=${"a".repeat(48)}`)).toBe("a".repeat(48));
  });
});

import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../app";
import { call, TEST_SECRETS } from "../../../test/helpers/fixtures";

const ADMIN = TEST_SECRETS.ADMIN_TOKEN;
const uniqueEmail = () => `boot-${crypto.randomUUID().slice(0, 8)}@example.test`;
const body = (email = uniqueEmail(), password = "a-very-long-password") => ({
  name: "Acme",
  plan: "pro",
  owner: { email, name: "Olive", password },
});
const post = (payload: unknown, token: string | null = ADMIN) =>
  call("/v1/admin/organizations", { method: "POST", body: JSON.stringify(payload), key: token ?? undefined });

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

describe("POST /v1/admin/organizations", () => {
  it("creates an organization with owner, default project, master key and playground key", async () => {
    const email = uniqueEmail();
    const res = await post({ ...body(email.toUpperCase()), credits: "12.5" });
    expect(res.status).toBe(201);
    const json = (await res.json()) as Record<string, Record<string, unknown>>;
    expect(json.organization).toMatchObject({ name: "Acme", plan: "pro", credits: "12.5" });
    expect(json.owner).toEqual({ userId: expect.stringMatching(/^user_/), memberId: expect.stringMatching(/^mem_/), email });
    expect(json.project).toMatchObject({ name: "Default project", isDefault: true, organizationId: json.organization!.id });
    expect(json.masterKey!.token).toMatch(/^swbm_[A-Za-z0-9]{40}$/);
    expect(json.playgroundKey).toMatchObject({ kind: "playground", status: "active", token: expect.stringMatching(/^swb_[A-Za-z0-9]{40}$/) });
    const text = JSON.stringify(json);
    expect(text).not.toMatch(/fingerprint|passwordHash|pbkdf2/);

    // The master key works against the master API of its organization.
    const org = await call("/v1/master/organization", { key: json.masterKey!.token as string });
    expect(org.status).toBe(200);
    expect(((await org.json()) as { organization: { id: string } }).organization.id).toBe(json.organization!.id);
  });

  it("reuses an existing owner when the password matches, 409 otherwise", async () => {
    const email = uniqueEmail();
    const first = (await (await post(body(email))).json()) as { owner: { userId: string } };
    const second = await post(body(email));
    expect(second.status).toBe(201);
    const again = (await second.json()) as { owner: { userId: string }; organization: { id: string } };
    expect(again.owner.userId).toBe(first.owner.userId);

    const clash = await post(body(email, "another-long-password"));
    expect(clash.status).toBe(409);
    expect(((await clash.json()) as ErrorBody).error).toMatchObject({ code: "user_exists", param: "owner.email" });
  });

  it("rejects a wrong or missing admin token with 401", async () => {
    for (const token of ["wrong", `${ADMIN}x`, null]) {
      const res = await post(body(), token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as ErrorBody).error.type).toBe("authentication_error");
    }
  });

  it("validates the body with 400 and param", async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...body(), plan: "gold" }, "plan"],
      [{ ...body(), name: "" }, "name"],
      [{ ...body(), owner: { email: "not-an-email", name: "x", password: "a-very-long-password" } }, "owner.email"],
      [{ ...body(), owner: { email: uniqueEmail(), name: "x", password: "short" } }, "owner.password"],
      [{ ...body(), credits: "-1" }, "credits"],
      // A misspelt field is named, not dropped (a dropped `credit` would start the organization at 0).
      [{ ...body(), credit: "25" }, "credit"],
      [{ ...body(), owner: { email: uniqueEmail(), name: "x", password: "a-very-long-password", role: "admin" } }, "owner.role"],
    ];
    for (const [payload, param] of cases) {
      const res = await post(payload);
      expect(res.status, param).toBe(400);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: "invalid_request_error", param });
    }
  });

  it("answers 404 when ADMIN_TOKEN is not configured", async () => {
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request("http://gw.test/v1/admin/organizations", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify(body()),
      }),
      { ...env, ADMIN_TOKEN: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(404);
    expect(((await res.json()) as ErrorBody).error.type).toBe("not_found_error");
  });
});

/**
 * An expiry an owner or admin set on a developer's key is managed like limits.
 * Before the fix the developer removed it (`PATCH /api/keys/{id} {"expiresAt": null}`) or moved it
 * ten years ahead: 200.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { signIn, type Session } from "../dashboard/session";

function api(s: Session, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cookie", s.cookie);
  headers.set("x-csrf-token", s.csrf);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { ...init, headers });
}

async function developer(org: SeededOrg): Promise<Session> {
  const addr = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "a developer's long password";
  expect((await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: addr, name: "Dev", role: "developer", password }) })).status).toBe(201);
  return signIn(addr, password);
}

const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString();

describe("an owner-set expiry", () => {
  it("a developer cannot remove, extend or change it: 403 key_managed; the owner can", async () => {
    const org = await seedOrg();
    const ds = await developer(org);
    const os = await signIn(org.ownerEmail, org.ownerPassword);
    const made = await api(ds, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "dev key" }) });
    expect(made.status).toBe(201);
    const keyId = ((await made.json()) as { apiKey: { id: string } }).apiKey.id;
    const patch = (s: Session, body: unknown) => api(s, `/keys/${keyId}`, { method: "PATCH", body: JSON.stringify(body) });

    const deadline = inDays(7);
    expect((await patch(os, { expiresAt: deadline })).status).toBe(200);

    for (const body of [{ expiresAt: null }, { expiresAt: inDays(3650) }, { expiresAt: inDays(8) }, { description: "x", expiresAt: null }]) {
      const res = await patch(ds, body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("key_managed");
    }
    const detail = (await (await api(os, `/keys/${keyId}`)).json()) as { apiKey: { expiresAt: string | null; description: string } };
    expect(detail.apiKey.expiresAt).toBe(deadline);
    expect(detail.apiKey.description).toBe("dev key");
    // Other changes stay the developer's.
    expect((await patch(ds, { description: "renamed" })).status).toBe(200);

    // The owner removes the expiry: it is no longer managed, the developer may set their own.
    expect((await patch(os, { expiresAt: null })).status).toBe(200);
    expect((await patch(ds, { expiresAt: inDays(30) })).status).toBe(200);
    expect((await patch(ds, { expiresAt: null })).status).toBe(200);
  });

  it("an expiry the developer set is theirs to change", async () => {
    const org = await seedOrg();
    const ds = await developer(org);
    const made = await api(ds, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "mine", expiresIn: { value: 2, unit: "day" } }) });
    expect(made.status).toBe(201);
    const keyId = ((await made.json()) as { apiKey: { id: string } }).apiKey.id;
    expect((await api(ds, `/keys/${keyId}`, { method: "PATCH", body: JSON.stringify({ expiresAt: null }) })).status).toBe(200);
  });
});

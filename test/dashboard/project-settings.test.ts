/**
 * The dashboard's project card (response cache opt-in, its lifetime, keeping bodies) and the
 * request page's prompt and answer.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { chat, user, waitForLog } from "../chat/helpers";
import { signIn, type Session } from "./session";

function api(s: Session, path: string, method = "GET", body?: unknown): Promise<Response> {
  const headers = new Headers({ cookie: s.cookie, "x-csrf-token": s.csrf });
  if (body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
const html = async (s: Session, path: string) => (await call(path, { headers: { cookie: s.cookie, accept: "text/html" } })).text();

describe("dashboard: project settings and request bodies", () => {
  it("shows the cache off for a new project, and owners turn it and body keeping on", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const page = await html(owner, "/dashboard/organization");
    expect(page).toContain("Answer identical requests from the cache");
    expect(page).toMatch(/name="cachingEnabled"(?![^>]*checked)/);
    expect(page).toContain("not deterministic");

    const res = await api(owner, `/projects/${org.projectId}`, "PATCH", { cachingEnabled: true, cacheDurationSeconds: 120, logBodies: true });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { project: Record<string, unknown> }).project).toMatchObject({ cachingEnabled: true, cacheDurationSeconds: 120, logBodies: true });
    expect(await html(owner, "/dashboard/organization")).toMatch(/name="cachingEnabled"[^>]*checked/);
    expect((await api(owner, `/projects/${org.projectId}`, "PATCH", { cacheDurationSeconds: 0 })).status).toBe(400);

    const devEmail = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: devEmail, name: "Dev", role: "developer", password: "another long password" }) });
    const dev = await signIn(devEmail, "another long password");
    expect((await api(dev, `/projects/${org.projectId}`, "PATCH", { logBodies: false })).status).toBe(403);
  });

  it("renders the kept prompt and answer on the request page", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    await api(owner, `/projects/${org.projectId}`, "PATCH", { logBodies: true });
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("what is the capital of Peru") });
    const row = await waitForLog(res.headers.get("x-request-id")!);
    let page = "";
    for (let i = 0; i < 100 && !page.includes("Hello from openai"); i++) {
      page = await html(owner, `/dashboard/requests/${row.id}?at=${row.createdAt}`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(page).toContain("Prompt and answer");
    expect(page).toContain("what is the capital of Peru");
    expect(page).toContain("Hello from openai/gpt-4o-mini");
  });
});

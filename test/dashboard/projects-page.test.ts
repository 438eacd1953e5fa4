/**
 * Projects in the dashboard: the Organization page lists them, and owners and admins create,
 * rename, change the mode of and delete one through the session API (the master API's actions).
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { signIn, type Session } from "./session";

function api(s: Session, path: string, method = "GET", body?: unknown): Promise<Response> {
  const headers = new Headers({ cookie: s.cookie, "x-csrf-token": s.csrf });
  if (body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
const html = async (s: Session, path: string) => (await call(path, { headers: { cookie: s.cookie, accept: "text/html" } })).text();

describe("dashboard: projects", () => {
  it("owners create, rename, set the mode of and delete a project; the page lists them", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const created = await api(owner, "/projects", "POST", { name: "Research", mode: "hybrid" });
    expect(created.status).toBe(201);
    const { project } = (await created.json()) as { project: { id: string; name: string; mode: string } };
    expect(project).toMatchObject({ name: "Research", mode: "hybrid" });

    let page = await html(owner, "/dashboard/organization");
    expect(page).toContain('aria-labelledby="projects-title"');
    expect(page).toContain(`data-project-id="${project.id}"`);
    expect(page).toContain('href="#projects"');

    const patched = await api(owner, `/projects/${project.id}`, "PATCH", { name: "Research lab", mode: "api-keys" });
    expect(patched.status).toBe(200);
    const master = (await (await call(`/v1/master/projects/${project.id}`, { key: org.masterKey })).json()) as { project: { name: string; mode: string } };
    expect(master.project).toMatchObject({ name: "Research lab", mode: "api-keys" });
    expect((await api(owner, `/projects/${project.id}`, "PATCH", { mode: "sideways" })).status).toBe(400);

    // a key of the project goes with it
    const key = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: project.id, description: "lab key" }) });
    expect(key.status).toBe(201);
    const deleted = await api(owner, `/projects/${project.id}`, "DELETE");
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ deletedKeys: 1 });
    expect((await call(`/v1/master/projects/${project.id}`, { key: org.masterKey })).status).toBe(404);
    page = await html(owner, "/dashboard/organization");
    expect(page).not.toContain(`data-project-id="${project.id}"`);

    const refused = await api(owner, `/projects/${org.projectId}`, "DELETE");
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("default_project");

    // the audit log names the change as the master API's would be
    const audit = (await (await api(owner, "/audit-log?action=project.delete")).json()) as { entries: Array<{ target: { id: string } }> };
    expect(audit.entries.map((e) => e.target.id)).toContain(project.id);
  });

  it("developers see the projects but cannot create, change or delete one", async () => {
    const org = await seedOrg();
    const devEmail = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: devEmail, name: "Dev", role: "developer", password: "another long password" }) });
    const dev = await signIn(devEmail, "another long password");
    expect((await api(dev, "/projects")).status).toBe(200);
    expect((await api(dev, "/projects", "POST", { name: "Mine" })).status).toBe(403);
    expect((await api(dev, `/projects/${org.projectId}`, "PATCH", { name: "Renamed" })).status).toBe(403);
    const page = await html(dev, "/dashboard/organization");
    expect(page).toContain('aria-labelledby="projects-title"');
    expect(page).not.toContain('data-api="/api/projects"');
  });
});

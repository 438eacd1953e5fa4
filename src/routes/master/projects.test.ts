import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
interface ProjectBody {
  project: { id: string; name: string; mode: string; cachingEnabled: boolean; cacheDurationSeconds: number; isDefault: boolean; logBodies: boolean };
}

describe("master API: projects", () => {
  it("requires a valid master key", async () => {
    expect((await call("/v1/master/projects")).status).toBe(401);
    const org = await seedOrg();
    expect((await call("/v1/master/projects", { key: org.key })).status).toBe(401);
    expect((await call("/v1/master/projects", { key: `swbm_${"A".repeat(40)}` })).status).toBe(401);
  });

  it("starts a project with the response cache off unless it is created with it on", async () => {
    const org = await seedOrg();
    const list = (await (await call("/v1/master/projects", { key: org.masterKey })).json()) as { projects: Array<ProjectBody["project"]> };
    expect(list.projects[0]).toMatchObject({ id: org.projectId, cachingEnabled: false });
    const on = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json({ name: "Cached", cachingEnabled: true }) });
    expect(((await on.json()) as ProjectBody).project).toMatchObject({ cachingEnabled: true, cacheDurationSeconds: 3600 });
  });

  it("creates, lists, updates and deletes projects", async () => {
    const org = await seedOrg();
    const created = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json({ name: "Research", mode: "credits", cacheDurationSeconds: 60 }) });
    expect(created.status).toBe(201);
    const { project } = (await created.json()) as ProjectBody;
    expect(project).toMatchObject({ name: "Research", mode: "credits", cachingEnabled: false, cacheDurationSeconds: 60, isDefault: false, logBodies: false });

    const list = (await (await call("/v1/master/projects", { key: org.masterKey })).json()) as { projects: Array<{ id: string }> };
    expect(list.projects.map((p) => p.id)).toEqual([org.projectId, project.id]);

    const empty = await call(`/v1/master/projects/${project.id}`, { method: "PATCH", key: org.masterKey, ...json({}) });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("nothing to update");
    const patched = await call(`/v1/master/projects/${project.id}`, { method: "PATCH", key: org.masterKey, ...json({ cachingEnabled: true, logBodies: true, mode: "api-keys" }) });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as ProjectBody).project).toMatchObject({ cachingEnabled: true, logBodies: true, mode: "api-keys", name: "Research" });

    const del = await call(`/v1/master/projects/${project.id}`, { method: "DELETE", key: org.masterKey });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ message: expect.any(String) });
    expect((await call(`/v1/master/projects/${project.id}`, { key: org.masterKey })).status).toBe(404);
  });

  it("PATCH reaches warm key contexts immediately (versions bumped and synced)", async () => {
    const org = await seedOrg();
    const warm = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(warm.project.cachingEnabled).toBe(false);
    await call(`/v1/master/projects/${org.projectId}`, { method: "PATCH", key: org.masterKey, ...json({ cachingEnabled: true }) });
    const fresh = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(fresh.project.cachingEnabled).toBe(true);
    expect(fresh.key.version).toBeGreaterThan(warm.key.version);
  });

  it("deleting a project deletes its keys at once; the default project cannot be deleted", async () => {
    const org = await seedOrg();
    const res = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json({ name: "Temp" }) });
    const { project } = (await res.json()) as ProjectBody;
    const key = await addKey(org, { projectId: project.id });
    const ctx = await checkKey(env, await resolveGatewayKey(env, key.token));
    expect(ctx.project.id).toBe(project.id);

    await call(`/v1/master/projects/${project.id}`, { method: "DELETE", key: org.masterKey });
    await expect(checkKey(env, ctx)).rejects.toMatchObject({ status: 401, code: "key_deleted" });

    const def = await call(`/v1/master/projects/${org.projectId}`, { method: "DELETE", key: org.masterKey });
    expect(def.status).toBe(400);
    expect(((await def.json()) as ErrorBody).error.code).toBe("default_project");
    // The organization's other key still works.
    await expect(checkKey(env, await resolveGatewayKey(env, org.key))).resolves.toBeTruthy();
  });

  it("validates bodies with 400 + param and hides other organizations' projects", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    for (const [body, param] of [
      [{}, "name"],
      [{ name: "x", mode: "free" }, "mode"],
      [{ name: "x", cacheDurationSeconds: -5 }, "cacheDurationSeconds"],
      [{ name: "x", cachingEnabled: "yes" }, "cachingEnabled"],
    ] as const) {
      const res = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json(body) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.param).toBe(param);
    }
    expect((await call(`/v1/master/projects/${other.projectId}`, { method: "PATCH", key: org.masterKey, ...json({ name: "hijack" }) })).status).toBe(404);
    expect((await call(`/v1/master/projects/${other.projectId}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
  });
});

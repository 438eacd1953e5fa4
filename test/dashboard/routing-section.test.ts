/**
 * The dashboard's routing section of a project (default preferences, the hybrid fallback to the
 * operator's keys, regions in use, the organization's residency) and provider health per caller
 * continent, on the Organization page.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg } from "../helpers/fixtures";
import { chat, resetMetrics, user, waitForLog } from "../chat/helpers";
import { metricsWritesSettled } from "../../src/routing/live-metrics";
import { signIn, type Session } from "./session";

function api(s: Session, path: string, method = "GET", body?: unknown): Promise<Response> {
  const headers = new Headers({ cookie: s.cookie, "x-csrf-token": s.csrf });
  if (body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
const html = async (s: Session, path: string) => (await call(path, { headers: { cookie: s.cookie, accept: "text/html" } })).text();

describe("dashboard: routing section and provider health per continent", () => {
  it("shows and saves a project's default preferences and the hybrid fallback; clears them", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    let page = await html(owner, "/dashboard/organization");
    expect(page).toContain("Routing: ");
    expect(page).toContain("The organization sets no residency");
    expect(page).toMatch(/name="operatorKeyFallback"(?![^>]*checked)/);

    // What the form sends (app.js: dotted names nest, lists split on commas).
    const saved = await api(owner, `/projects/${org.projectId}`, "PATCH", {
      provider: { sort: "latency", order: ["openai", "azure"], allow_fallbacks: true, data_collection: "deny" },
      operatorKeyFallback: true,
    });
    expect(saved.status).toBe(200);
    page = await html(owner, "/dashboard/organization");
    expect(page).toMatch(/<option value="latency" selected/);
    expect(page).toContain('value="openai, azure"');
    expect(page).toMatch(/<option value="deny" selected/);
    expect(page).toMatch(/name="operatorKeyFallback"[^>]*checked/);
    expect(page).toContain("Clear default preferences");
    // A typo inside provider is refused with the field named.
    const bad = await api(owner, `/projects/${org.projectId}`, "PATCH", { provider: { sortt: "price" } });
    expect(bad.status).toBe(400);

    expect((await api(owner, `/projects/${org.projectId}`, "PATCH", { provider: null })).status).toBe(200);
    expect(await html(owner, "/dashboard/organization")).not.toContain("Clear default preferences");
  });

  it("shows the regions that answered, the organization's residency and health per caller continent", async () => {
    await resetMetrics();
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "deepinfra", token: "tok-eu", region: "eu-west-1" }) });
    expect(res.status).toBe(201);
    const answered = await chat(org.key, { model: "deepinfra/llama-3.3-70b-instruct", messages: user(`hi ${crypto.randomUUID()}`) }, { "x-debug-caller-continent": "EU", "x-no-cache": "true" });
    expect(answered.status).toBe(200);
    await waitForLog(answered.headers.get("x-request-id")!);
    await metricsWritesSettled(env);
    expect((await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ compliance: { regions: ["EU"] } }) })).status).toBe(200);

    const page = await html(owner, "/dashboard/organization");
    expect(page).toMatch(/<td data-label="Region">eu-west-1<\/td><td data-label="Requests">1<\/td>/);
    expect(page).toContain("only endpoints in: EU");
    expect(page).toContain("Provider health by caller continent");
    expect(page).toMatch(/<th scope="col">EU<\/th>/);
    expect(page).toMatch(/<td data-label="EU">100\.0% · — \/ —<\/td>/);
  });
});

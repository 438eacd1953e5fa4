/**
 * The dashboard UI at the HTTP level: redirects, security headers, what the pages show
 * to whom, and the session API the pages post to (organization settings, IAM rules). The browser
 * suite (scripts/test-browser.mjs) drives the same pages in Chromium.
 */
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat } from "../chat/helpers";
import { settledSpend, waitForLogs } from "../resilience/helpers";
import { withKeyStateCount } from "../helpers/do-calls";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { formatUsd } from "../../src/billing/money";
import { formatDate, formatUsd as dashboardUsd } from "../../src/dashboard/format";
import { signIn, type Session } from "./session";


const page = (s: Session | null, path: string): Promise<Response> =>
  call(path, { redirect: "manual", headers: s ? { cookie: s.cookie, accept: "text/html" } : { accept: "text/html" } });

function api(s: Session, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cookie", s.cookie);
  headers.set("x-csrf-token", s.csrf);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { ...init, headers });
}

async function addMember(org: SeededOrg, role: "owner" | "admin" | "developer") {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: role, role, password }) });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { member: { id: string } }).member.id, email, password };
}

function expectPageHeaders(res: Response): void {
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toMatch(/default-src '(self|none)'/);
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
}

/** No inline script or style: everything comes from the static assets. */
function expectNoInlineCode(html: string): void {
  // A JSON data block (type="application/json") is not executed; the CSP does not apply to it.
  expect(html).not.toMatch(/<script(?![^>]*\b(src=|type="application\/json"))[^>]*>/);
  expect(html).not.toMatch(/<style\b/);
  expect(html).not.toMatch(/\sstyle="/);
  expect(html).not.toMatch(/\son[a-z]+="/);
}

describe("dashboard pages", () => {
  it("redirects /login and signed-out pages to the sign-in page", async () => {
    for (const path of ["/login", "/dashboard", "/dashboard/keys", "/dashboard/usage", "/dashboard/access", "/dashboard/organization"]) {
      const res = await page(null, path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toMatch(/^\/dashboard\/(sign-in|keys)$/);
    }
    expect((await page(null, "/dashboard/keys")).headers.get("location")).toBe("/dashboard/sign-in");
  });

  it("serves a labelled sign-in form with strict security headers and no inline code", async () => {
    const res = await page(null, "/dashboard/sign-in");
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const html = await res.text();
    expectNoInlineCode(html);
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<button[^>]*type="submit"[^>]*>\s*Sign in\s*<\/button>/);
    expect(html).toContain('data-api="/api/auth/sign-in"');
    expect(html).toContain('<script src="/dashboard/assets/app.js" defer="">');
  });

  it("serves the membership acceptance page without a session, token-free, with strict headers", async () => {
    const res = await page(null, "/dashboard/accept");
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expectNoInlineCode(html);
    expect(html).toContain("<h1>Accept membership</h1>");
    expect(html).toContain('<label for="accept-token-value">Invitation token</label>');
    expect(html).toContain('<label for="accept-password">Choose a password</label>');
    expect(html).toContain('<script src="/dashboard/assets/app.js" defer="">');
  });

  it("renders every page for the owner, with the navigation and the session's CSRF token", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    for (const path of ["/dashboard/keys", "/dashboard/usage", "/dashboard/access", "/dashboard/organization"]) {
      const res = await page(s, path);
      expect(res.status, path).toBe(200);
      expectPageHeaders(res);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      expectNoInlineCode(html);
      expect(html).toContain(`<meta name="csrf-token" content="${s.csrf}"/>`);
      for (const nav of ["Keys", "Usage", "Access rules", "Organization"]) expect(html).toContain(`>${nav}</a>`);
      // standards mode (a page without a doctype renders in quirks mode), links to the references
      expect(html.startsWith("<!DOCTYPE html>"), path).toBe(true);
      expect(html).toContain('<a href="/docs">API docs</a>');
      expect(html).toContain('<a href="/mcp">MCP</a>');
      expect(html).toContain('<script src="/dashboard/assets/theme.js">');
    }
  });

  it("answers an unknown dashboard path with an HTML 404 page, not the API's JSON", async () => {
    for (const s of [null, await (async () => { const org = await seedOrg(); return signIn(org.ownerEmail, org.ownerPassword); })()]) {
      const res = await page(s, "/dashboard/nope");
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
      expectPageHeaders(res);
      const html = await res.text();
      expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
      expect(html).toContain("<h1>Page not found</h1>");
      expectNoInlineCode(html);
    }
    // the API keeps its JSON envelope
    const api404 = await call("/v1/nope");
    expect(api404.status).toBe(404);
    expect(((await api404.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
  });

  it("lists keys without secrets; the playground key offers neither Roll nor Delete", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const html = await (await page(s, "/dashboard/keys")).text();
    expect(html).toContain("test key");
    expect(html).not.toContain(org.key);
    expect(html).not.toContain(org.playgroundKey);
    const rows = html.split("<tr data-key-id=").slice(1);
    const playground = rows.find((r) => r.startsWith(`"${org.playgroundKeyId}"`))!;
    const standard = rows.find((r) => r.startsWith(`"${org.keyId}"`))!;
    expect(playground).toContain("playground");
    expect(playground).not.toMatch(/>\s*Roll\s*</);
    expect(playground).not.toMatch(/>\s*Delete\s*</);
    expect(standard).toMatch(/>\s*Roll\s*</);
    expect(standard).toMatch(/>\s*Delete\s*</);
    expect(standard).toMatch(/>\s*Disable\s*</);
  });

  it("lists 30 keys with their settled spend without one KeyState call", async () => {
    const org = await seedOrg();
    const limited = await addKey(org, { description: "limited key", usageLimit: "10", periodUsageLimit: "5", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    for (let i = 0; i < 28; i++) await addKey(org, { description: `idle key ${i}` });
    const ids: string[] = [];
    for (const [token, content] of [[org.key, "a"], [limited.token, "b"], [limited.token, "c"]] as const) {
      const res = await chat(token, { model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content }] }, { "x-no-cache": "true" });
      expect(res.status).toBe(200);
      ids.push(res.headers.get("x-request-id")!);
    }
    expect(await waitForLogs(ids)).toHaveLength(3);
    const spent = new Map<string, bigint>();
    for (const id of [org.keyId, limited.row.id]) spent.set(id, (await settledSpend(id)).usage);
    expect(spent.get(limited.row.id)).toBeGreaterThan(0n);
    const periodStart = (await keyStateStub(env, limited.row.id).getSpend()).periodStartedAt;

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const { res, keyStateCalls } = await withKeyStateCount("/dashboard/keys", { headers: { cookie: s.cookie, accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(keyStateCalls).toBe(0);
    const html = await res.text();
    const rows = html.split("<tr data-key-id=").slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(30);
    const cell = (id: string, label: string) => {
      const row = rows.find((r) => r.startsWith(`"${id}"`))!;
      return row.slice(row.indexOf(`data-label="${label}"`)).split("</td>")[0]!;
    };
    const usd = (pico: bigint) => dashboardUsd(formatUsd(pico));
    expect(cell(org.keyId, "All-time")).toContain(usd(spent.get(org.keyId)!));
    expect(cell(limited.row.id, "All-time")).toContain(`${usd(spent.get(limited.row.id)!)}<span class="muted"> / $10.00`);
    expect(cell(limited.row.id, "Recurring")).toContain(usd(spent.get(limited.row.id)!));
    expect(cell(limited.row.id, "Recurring")).toContain(`resets ${formatDate(periodStart! + 86_400_000)}`);
    const idle = rows.find((r) => r.includes("idle key 0"))!;
    expect(idle.slice(idle.indexOf('data-label="All-time"')).split("</td>")[0]).toContain("$0.00");
  });

  it("an expired key asks for a new expiry to be enabled; the editor opens on demand", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const soon = new Date(Date.now() + 400).toISOString();
    expect((await api(s, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ expiresAt: soon }) })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 600));
    const html = await (await page(s, "/dashboard/keys")).text();
    const row = html.split("<tr data-key-id=").find((r) => r.startsWith(`"${org.keyId}"`))!;
    expect(row).toContain("expired");
    expect(row).toContain("New expiry (UTC)");
    expect(row).not.toContain("Expires at (UTC)");
    const edit = await (await page(s, `/dashboard/keys?edit=${org.keyId}`)).text();
    expect(edit).toContain("Expires at (UTC)");
    expect(edit).toContain(`Edit “test key”`);
  });

  it("shows a developer only their own keys and their own usage scope", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const s = await signIn(dev.email, dev.password);
    const created = await api(s, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "dev own key" }) });
    expect(created.status).toBe(201);
    const keys = await (await page(s, "/dashboard/keys")).text();
    expect(keys).toContain("dev own key");
    expect(keys).not.toContain("test key");
    const usage = await (await page(s, "/dashboard/usage")).text();
    expect(usage).toContain("API keys you created in project");
    const orgPage = await (await page(s, "/dashboard/organization")).text();
    expect(orgPage).not.toContain("Credits balance");
    expect(orgPage).not.toContain("Save compliance");
  });

  it("draws traffic in the usage chart once the log consumer has aggregated it (the cron only closes hours)", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat(org.key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(200);
      ids.push(res.headers.get("x-request-id")!);
    }
    expect((await waitForLogs(ids)).length).toBe(3);
    // The window row and the aggregates are written in the same D1 batch (src/usage/log-consumer.ts).
    const before = await (await page(s, "/dashboard/usage?granularity=hour")).text();
    expect(before).toMatch(/role="img" aria-label="Requests: 3 in total/);
    const ectx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env, ectx);
    await waitOnExecutionContext(ectx);
    const html = await (await page(s, "/dashboard/usage?granularity=hour")).text();
    expect(html).toMatch(/<rect class="bar"/);
    expect(html).toMatch(/role="img" aria-label="Requests: 3 in total/);
    expect(html).toContain("GPT-4o mini");
  });

  it("offers an organization switcher to a person in several organizations (re-sign-in to the chosen one)", async () => {
    const a = await seedOrg({ name: "Alpha Org" });
    const b = await seedOrg({ name: "Beta Org" });
    const res = await call("/v1/master/members", { method: "POST", key: b.masterKey, ...json({ email: a.ownerEmail, name: "Owner A", role: "developer" }) });
    expect(res.status).toBe(201);
    // Accepted (test/security/switcher.test.ts takes the e-mailed token; a pending one is not listed).
    const memberId = ((await res.json()) as { member: { id: string } }).member.id;
    await env.DB.prepare("UPDATE members SET accepted_at = ? WHERE id = ?").bind(Date.now(), memberId).run();
    const s = await signIn(a.ownerEmail, a.ownerPassword);
    const html = await (await page(s, "/dashboard/keys")).text();
    expect(html).toContain('<label for="switch-org">Organization</label>');
    expect(html).toContain(`<option value="${a.orgId}" selected="">Alpha Org</option>`);
    expect(html).toContain(`<option value="${b.orgId}">Beta Org</option>`);
    const signInPage = await page(s, `/dashboard/sign-in?org=${b.orgId}`);
    expect(signInPage.status).toBe(200);
    expect(await signInPage.text()).toContain(`<input type="hidden" name="organizationId" value="${b.orgId}"/>`);
    // Same organization: straight back to the dashboard.
    expect((await page(s, `/dashboard/sign-in?org=${a.orgId}`)).headers.get("location")).toBe("/dashboard/keys");
  });

  it("a reversed date range shows the period form again, filled in, with the reason", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await page(s, "/dashboard/usage?from=2026-03-10&to=2026-03-01");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("&#39;from&#39; (2026-03-10) must not be after &#39;to&#39; (2026-03-01).");
    expect(html).toMatch(/<input id="u-from" type="date" name="from" value="2026-03-10"\/>/);
    expect(html).toMatch(/<input id="u-to" type="date" name="to" value="2026-03-01"\/>/);
  });

  it("an ISO 8601 time in the period is read as its UTC day, on the Usage and the Requests pages", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const usage = await (await page(s, "/dashboard/usage?from=2026-03-01T22:30:00-03:00&to=2026-03-05T08:00:00Z")).text();
    expect(usage).toMatch(/<input id="u-from" type="date" name="from" value="2026-03-02"\/>/);
    expect(usage).toMatch(/<input id="u-to" type="date" name="to" value="2026-03-05"\/>/);
    const requests = await (await page(s, "/dashboard/requests?from=2026-03-01T10:00:00Z&to=2026-03-05T08:00:00Z")).text();
    expect(requests).toContain("2026-03-01 to 2026-03-05 (UTC)");
    expect(requests).toMatch(/<input id="r-from" type="date" name="from" value="2026-03-01"\/>/);
  });

  it("keys and members tables are marked for sorting, search and pages (the browser suite drives them; rankings too)", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const keys = await (await page(s, "/dashboard/keys")).text();
    expect(keys).toContain('<table class="stack" data-enhance="true" aria-label="API keys">');
    const orgPage = await (await page(s, "/dashboard/organization")).text();
    expect(orgPage).toContain('<table class="stack" data-enhance="true" aria-label="Members">');
  });

  it("bad query values answer the page with the reason, never a failure or a silent default", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const yesterday = await page(s, "/dashboard/usage?from=yesterday&granularity=minute");
    expect(yesterday.status).toBe(200);
    expect(await yesterday.text()).toContain("&#39;from&#39; must be a UTC date written YYYY-MM-DD, or an ISO 8601 time such as 2026-01-31T10:00:00Z (got &#39;yesterday&#39;).");
    const requests = await page(s, "/dashboard/requests?to=soon&model=gpt-4o");
    expect(requests.status).toBe(200);
    const requestsHtml = await requests.text();
    expect(requestsHtml).toContain("&#39;to&#39; must be a UTC date written YYYY-MM-DD, or an ISO 8601 time");
    // The filters come back as sent, to correct the period in place.
    expect(requestsHtml).toContain('<form method="get" action="/dashboard/requests" class="card inline" aria-label="Filters">');
    expect(requestsHtml).toMatch(/<input id="r-model" name="model" value="gpt-4o"\/>/);
    const reversed = await (await page(s, "/dashboard/requests?from=2026-03-10&to=2026-03-01")).text();
    expect(reversed).toContain("&#39;From&#39; must not be after &#39;To&#39;.");
    expect(reversed).toMatch(/<input id="r-from" type="date" name="from" value="2026-03-10"\/>/);
    const tooLong = await page(s, "/dashboard/usage?from=2020-01-01&to=2026-01-01");
    expect(tooLong.status).toBe(200);
    expect(await tooLong.text()).toContain("at most 366 days");
    expect((await page(s, "/dashboard/access?key=../../etc")).status).toBe(200);
    const badDay = await page(s, "/dashboard/usage?to=2026-13-45&granularity=hour");
    expect(badDay.status).toBe(200);
    expect(await badDay.text()).toContain("must be a UTC date written YYYY-MM-DD");
  });
});

describe("HTML pages outside the dashboard use the shared stylesheet and strict headers", () => {
  it("the /mcp setup page", async () => {
    const res = await call("/mcp", { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const html = await res.text();
    expectNoInlineCode(html);
    expect(html).toContain('<link rel="stylesheet" href="/dashboard/assets/app.css">');
  });

  it("the OAuth error page", async () => {
    const res = await call("/oauth/authorize?response_type=code", { headers: { accept: "text/html" } });
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expectPageHeaders(res);
    const html = await res.text();
    expectNoInlineCode(html);
    expect(html).toContain('href="/dashboard/assets/app.css"');
  });
});

describe("session API used by the pages", () => {
  it("PATCH /api/organization: owners and admins only, same result as the master API", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const ds = await signIn(dev.email, dev.password);
    const denied = await api(ds, "/organization", { method: "PATCH", body: JSON.stringify({ notifications: { thresholdPercent: 90 } }) });
    expect(denied.status).toBe(403);
    const devView = (await (await api(ds, "/organization")).json()) as { organization: Record<string, unknown> };
    expect(devView.organization.credits).toBeUndefined();

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const bad = await api(s, "/organization", { method: "PATCH", body: JSON.stringify({ notifications: { thresholdPercent: 20 } }) });
    expect(bad.status).toBe(400);
    const ok = await api(s, "/organization", { method: "PATCH", body: JSON.stringify({ notifications: { thresholdPercent: 90 }, compliance: { deniedProviders: ["groq"] } }) });
    expect(ok.status).toBe(200);
    const viaMaster = (await (await call("/v1/master/organization", { key: org.masterKey })).json()) as {
      organization: { notifications: { thresholdPercent: number }; compliance: { deniedProviders: string[] } };
    };
    expect(viaMaster.organization.notifications.thresholdPercent).toBe(90);
    expect(viaMaster.organization.compliance.deniedProviders).toEqual(["groq"]);
  });

  it("a key rule added through the session answers 403 with the wording the page previews", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await api(s, `/keys/${org.keyId}/iam`, { method: "POST", body: JSON.stringify({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } }) });
    expect(res.status).toBe(201);
    const denied = await chat(org.key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    expect(denied.status).toBe(403);
    const message = ((await denied.json()) as { error: { message: string } }).error.message;
    const html = await (await page(s, `/dashboard/access?key=${org.keyId}`)).text();
    expect(html).toContain(message.replace(/'/g, "&#39;"));
  });

  it("developers manage rules of their own keys only; member and team rules need an owner or admin", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const ds = await signIn(dev.email, dev.password);
    const rule = JSON.stringify({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } });
    expect((await api(ds, `/keys/${org.keyId}/iam`, { method: "POST", body: rule })).status).toBe(404);
    expect((await api(ds, `/members/${dev.id}/iam`, { method: "POST", body: rule })).status).toBe(403);
    expect((await api(ds, `/members/${dev.id}/iam`)).status).toBe(403);
  });

  it("admins set member rules but cannot modify an owner's rules (spec 5 rule 6)", async () => {
    const org = await seedOrg();
    const admin = await addMember(org, "admin");
    const dev = await addMember(org, "developer");
    const as = await signIn(admin.email, admin.password);
    const rule = JSON.stringify({ ruleType: "deny_providers", ruleValue: { providers: ["groq"] } });
    expect((await api(as, `/members/${dev.id}/iam`, { method: "POST", body: rule })).status).toBe(201);
    const onOwner = await api(as, `/members/${org.ownerMemberId}/iam`, { method: "POST", body: rule });
    expect(onOwner.status).toBe(403);
    expect(((await onOwner.json()) as { error: { message: string } }).error.message).toBe("Admins cannot modify an owner's member rules; ask an owner.");
    const os = await signIn(org.ownerEmail, org.ownerPassword);
    expect((await api(os, `/members/${org.ownerMemberId}/iam`, { method: "POST", body: rule })).status).toBe(201);
  });

  it("POST /api/keys creates the key's rules with it", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await api(s, "/keys", {
      method: "POST",
      body: JSON.stringify({ projectId: org.projectId, description: "ruled", iamRules: [{ ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } }] }),
    });
    expect(res.status).toBe(201);
    const { apiKey } = (await res.json()) as { apiKey: { id: string; token: string } };
    expect((await chat(apiKey.token, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).status).toBe(403);
    const rules = (await (await api(s, `/keys/${apiKey.id}/iam`)).json()) as { rules: unknown[] };
    expect(rules.rules).toHaveLength(1);
  });
});

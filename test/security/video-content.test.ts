/**
 * The video content route never serves an upstream's HTML or script. An
 * organization's admin points a BYOK provider key at their own server and starts two video jobs;
 * the server answers one job's content as `text/html` (a page loading the other job's content as
 * a script) and the other as `text/javascript`. Whoever opens the first link must get no page and
 * no script: only a video type is ever served (else a 502 envelope), always with `nosniff`, a
 * sandboxing CSP and a Content-Disposition; nothing of another type is stored in or served from
 * R2; and with `VIDEO_CONTENT_ORIGIN` the `content_url`s live on a host that serves nothing else.
 * (The real-browser check of the same chain is in scripts/test-browser.mjs.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { callWithEnv } from "../resilience/helpers";
import { getDb } from "../../src/db/client";
import { apiKeys, members, membershipInvitations, requestLogs } from "../../src/db/schema";

interface VideoView {
  id: string;
  content_url: string;
}

const FAKE = () => env.FAKE_UPSTREAM_URL as string;
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** An organization whose OpenAI provider key points at a server it controls (the fake upstream). */
async function attacker(): Promise<SeededOrg> {
  const org = await seedOrg();
  const pk = await call("/v1/master/provider-keys", {
    method: "POST",
    key: org.masterKey,
    ...json({ provider: "openai", token: `byok-attacker-${crypto.randomUUID().slice(0, 8)}`, baseUrl: `${FAKE()}/openai` }),
  });
  expect(pk.status).toBe(201);
  return org;
}

async function startJob(org: SeededOrg, prompt: string): Promise<VideoView> {
  const res = await call("/v1/videos", { method: "POST", key: org.key, ...json({ model: "sora-2", prompt, seconds: "4", size: "720x1280" }) });
  expect(res.status).toBe(200);
  return (await res.json()) as VideoView;
}

/** The headers every content answer carries, whatever its status. */
function expectSafeHeaders(res: Response): void {
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
}

/**
 * Not HTML, not script: a 502 error envelope without the upstream's bytes, or a video type (whose
 * bytes a browser only plays or downloads, whatever they are: `nosniff`, sandboxed).
 */
async function expectNoPageNoScript(res: Response): Promise<void> {
  expectSafeHeaders(res);
  const type = res.headers.get("content-type") ?? "";
  if (res.status === 502) {
    expect(type).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).not.toContain("<script");
    expect(text).not.toContain("alert(");
    expect(JSON.parse(text)).toMatchObject({ error: { type: "upstream_error", code: "upstream_not_video" } });
  } else {
    expect(type).toMatch(/^video\/(mp4|webm)$/);
    await res.arrayBuffer();
  }
}

const countOf = async (org: SeededOrg) => ({
  keys: (await getDb(env.DB).select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.organizationId, org.orgId))).length,
  members: (await getDb(env.DB).select({ id: members.id }).from(members).where(eq(members.organizationId, org.orgId))).length,
  invitations: (
    await getDb(env.DB)
      .select({ id: membershipInvitations.id })
      .from(membershipInvitations)
      .innerJoin(members, eq(members.id, membershipInvitations.memberId))
      .where(eq(members.organizationId, org.orgId))
  ).length,
});

describe("video content from a hostile upstream", () => {
  it("the attacker's chain (text/html loading text/javascript) ends with no page, no script, no key or invitation", async () => {
    const evil = await attacker();
    const victim = await seedOrg();
    const before = await countOf(victim);

    const script = await startJob(evil, "payload [[fake:video_type=text/javascript]]");
    const page = await startJob(evil, `lure [[fake:video_type=text/html; charset=utf-8,video_script=${pathOf(script.content_url)}]]`);

    // The victim opens the link (a playback token: no key needed), then the page's script tag loads.
    for (const url of [page.content_url, script.content_url]) {
      const res = await call(pathOf(url));
      expect(res.status).toBe(502);
      await expectNoPageNoScript(res);
    }
    // Also under production settings (PUBLIC_URL set), and with the attacker's own key.
    const prod = { ENVIRONMENT: "production", PUBLIC_URL: "https://gateway.example.test" };
    for (const url of [page.content_url, script.content_url]) {
      const { res } = await callWithEnv(prod, pathOf(url));
      expect(res.status).toBe(502);
      await expectNoPageNoScript(res);
      const keyed = await call(new URL(url).pathname, { key: evil.key });
      expect(keyed.status).toBe(502);
      await expectNoPageNoScript(keyed);
    }
    expect(await countOf(victim)).toEqual(before);
  });

  it("other upstream types (SVG, XML, plain text, no video) are refused; octet-stream is served as the job's video type", async () => {
    const evil = await attacker();
    for (const type of ["image/svg+xml", "text/xml", "application/xhtml+xml", "text/plain", "application/json", "application/pdf", "video/mp4x"]) {
      const job = await startJob(evil, `t [[fake:video_type=${type}]]`);
      const res = await call(pathOf(job.content_url));
      expect(res.status, type).toBe(502);
      await expectNoPageNoScript(res);
    }
    const generic = await startJob(evil, "g [[fake:video_type=application/octet-stream]]");
    const res = await call(pathOf(generic.content_url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="${generic.id}.mp4"`);
    await expectNoPageNoScript(res);
    // A real video (with codec parameters dropped) keeps its type; WebM is allowed.
    const webm = await startJob(evil, "w [[fake:video_type=video/webm; codecs=vp9]]");
    const w = await call(pathOf(webm.content_url));
    expect(w.status).toBe(200);
    expect(w.headers.get("content-type")).toBe("video/webm");
    expect(w.headers.get("content-disposition")).toBe(`inline; filename="${webm.id}.webm"`);
    await w.arrayBuffer();
  });

  it("ranges and the normal upstream keep working, with the safety headers on 200, 206 and 416", async () => {
    const org = await seedOrg();
    const job = await startJob(org, "a normal video");
    const full = await call(pathOf(job.content_url));
    expect(full.status).toBe(200);
    expect(full.headers.get("content-type")).toBe("video/mp4");
    expectSafeHeaders(full);
    expect((await full.arrayBuffer()).byteLength).toBe(1000);
    const part = await call(pathOf(job.content_url), { headers: { range: "bytes=0-9" } });
    expect(part.status).toBe(206);
    expectSafeHeaders(part);
    await part.arrayBuffer();
    const none = await call(pathOf(job.content_url), { headers: { range: "bytes=5000-" } });
    expect(none.status).toBe(416);
    expectSafeHeaders(none);
    // Errors of the route carry them too.
    const bad = await call(`/v1/videos/logs/${job.id}/content?token=garbage`);
    expect(bad.status).toBe(401);
    expectSafeHeaders(bad);
  });

  it("a finished job whose upstream answers HTML is never copied to R2; an object stored under another type is not served", async () => {
    const evil = await attacker();
    const job = await startJob(evil, "stored [[fake:video_type=text/html]]");
    const polled = await callWithEnv({}, `/v1/videos/${job.id}`, { key: evil.key });
    expect(polled.res.status).toBe(200);
    await polled.settled();
    expect(await env.UPLOADS.head(`videos/${job.id}.mp4`)).toBeNull();
    const row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, job.id)).get();
    expect(row!.extra).toMatchObject({ status: "completed", contentType: "video/mp4" });
    expect(row!.extra!.r2Key).toBeUndefined();

    // An object stored before this rule, under text/html, is refused rather than served as such.
    const legacy = await startJob(evil, "legacy");
    const key = `videos/${legacy.id}.mp4`;
    await env.UPLOADS.put(key, "<script>alert(1)</script>", { httpMetadata: { contentType: "text/html" } });
    const legacyRow = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, legacy.id)).get();
    await getDb(env.DB).update(requestLogs).set({ extra: { ...legacyRow!.extra, r2Key: key, contentType: "text/html" } }).where(eq(requestLogs.id, legacy.id));
    const res = await call(pathOf(legacy.content_url));
    expect(res.status).toBe(502);
    await expectNoPageNoScript(res);
  });
});

describe("VIDEO_CONTENT_ORIGIN", () => {
  const media = "https://media.gateway.example.test";
  const settings = { PUBLIC_URL: "https://gateway.example.test", VIDEO_CONTENT_ORIGIN: media };

  it("content_url points at the content origin, which serves the content route and nothing else", async () => {
    const org = await seedOrg();
    const created = await callWithEnv(settings, "/v1/videos", { method: "POST", key: org.key, body: JSON.stringify({ model: "sora-2", prompt: "own origin", seconds: "4" }) });
    expect(created.res.status).toBe(200);
    const job = (await created.res.json()) as VideoView;
    expect(job.content_url.startsWith(`${media}/v1/videos/logs/${job.id}/content?token=`)).toBe(true);

    // callWithEnv requests http://gw.test: the content origin is matched on the request's URL, so point it there.
    const local = { ...settings, VIDEO_CONTENT_ORIGIN: "http://gw.test" };
    const content = await callWithEnv(local, pathOf(job.content_url));
    expect(content.res.status).toBe(200);
    expect(content.res.headers.get("content-type")).toBe("video/mp4");
    await content.res.arrayBuffer();
    for (const path of ["/dashboard", "/dashboard/sign-in", "/api/keys", "/v1/models", "/openapi.json", "/mcp"]) {
      const res = (await callWithEnv(local, path, { key: org.key })).res;
      expect(res.status, path).toBe(404);
      await res.arrayBuffer();
    }
    const signIn = await callWithEnv(local, "/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email: org.ownerEmail, password: org.ownerPassword }) });
    expect(signIn.res.status).toBe(404);
    const head = await callWithEnv(local, pathOf(job.content_url), { method: "HEAD" });
    expect(head.res.status).toBe(200);
    // Set to the gateway's own origin by mistake, the setting restricts nothing.
    const same = (await callWithEnv({ PUBLIC_URL: "http://gw.test", VIDEO_CONTENT_ORIGIN: "http://gw.test" }, "/v1/models", { key: org.key })).res;
    expect(same.status).toBe(200);
    await same.arrayBuffer();
    // The gateway's own origin (not the content origin) keeps serving everything.
    const models = (await callWithEnv(settings, "/v1/models", { key: org.key })).res;
    expect(models.status).toBe(200);
    await models.arrayBuffer();
  });
});

describe("video content redirects", () => {
  it("an upstream 302 to an internal address is a 502; the target's body is never returned or stored", async () => {
    const evil = await attacker();
    const job = await startJob(evil, "moved [[fake:video_redirect]]");
    // The target serves a video type: only the redirect rule keeps its body out.
    const target = await fetch(`${FAKE()}/internal/secret`);
    expect(await target.text()).toBe("internal secret");
    for (const init of [{}, { headers: { range: "bytes=0-3" } }]) {
      const res = await call(pathOf(job.content_url), init);
      expect(res.status).toBe(502);
      expectSafeHeaders(res);
      const text = await res.text();
      expect(text).not.toContain("internal secret");
      expect(JSON.parse(text)).toMatchObject({ error: { type: "upstream_error", code: "upstream_redirect" } });
    }
    const polled = await callWithEnv({}, `/v1/videos/${job.id}`, { key: evil.key });
    expect(polled.res.status).toBe(200);
    await polled.settled();
    expect(await env.UPLOADS.head(`videos/${job.id}.mp4`)).toBeNull();
  });
});

import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { getDb } from "../src/db/client";
import { requestLogs } from "../src/db/schema";
import { mintPlaybackToken, verifyPlaybackToken, PLAYBACK_TOKEN_TTL_S } from "../src/generation/video/playback-token";
import { parseRange } from "../src/generation/videos";
import { keyStateStub } from "../src/durable-objects/key-state";
import { waitForApplied } from "./helpers/logs";

const FAKE_LENGTH = 1000;

interface VideoView {
  id: string;
  object: string;
  model: string;
  status: string;
  progress: number;
  seconds: string;
  size: string;
  content_url: string;
  usage?: { cost_usd: string };
  metadata: { log_id: string; used_provider: string; organization_id: string };
}

let org: SeededOrg;
let other: SeededOrg;
let video: VideoView;

const path = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

beforeAll(async () => {
  org = await seedOrg();
  other = await seedOrg();
  const res = await call("/v1/videos", { method: "POST", key: org.key, ...json({ model: "sora-2", prompt: "a paper boat on a river", seconds: "8", size: "1280x720" }) });
  expect(res.status).toBe(200);
  video = (await res.json()) as VideoView;
});

describe("POST /v1/videos", () => {
  it("creates a job on the catalogue's provider, logs it as kind video and charges per second", async () => {
    expect(video).toMatchObject({ object: "video", model: "sora-2", status: "queued", seconds: "8", size: "1280x720" });
    expect(video.id).toMatch(/^log_/);
    expect(video.usage?.cost_usd).toBe("0.8");
    expect(video.metadata.used_provider).toBe("openai");
    const row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, video.id)).get();
    expect(row).toMatchObject({ kind: "video", statusCode: 200, apiKeyId: org.keyId, costPico: 800_000_000_000 });
    expect(row!.extra).toMatchObject({ provider: "openai", upstreamId: expect.stringMatching(/^video_fake/), contentType: "video/mp4", status: "queued" });
    expect(String(row!.extra!.upstreamContentUrl)).toMatch(/\/openai\/videos\/video_fake\d+\/content$/);
  });

  it("validates model, size and seconds", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ prompt: "x", model: "gpt-image-1" }, "model"],
      [{ prompt: "x", model: "sora-2", size: "640x480" }, "size"],
      [{ prompt: "x", model: "sora-2", seconds: "5" }, "seconds"],
      [{ model: "sora-2" }, "prompt"],
    ];
    for (const [body, param] of cases) {
      const res = await call("/v1/videos", { method: "POST", key: org.key, ...json(body) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
    }
  });

  it("accepts the multipart form of the official openai SDK's videos.create", async () => {
    const { default: OpenAI, toFile } = await import("openai");
    const { exports } = await import("cloudflare:workers");
    const client = new OpenAI({ baseURL: "http://gw.test/v1", apiKey: org.key, fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)) });
    const v = await client.videos.create({ model: "sora-2", prompt: "a kite over the dunes", seconds: "4", size: "720x1280" });
    expect(v.object).toBe("video");
    expect(v.seconds).toBe("4");
    expect(v.size).toBe("720x1280");
    // Bad fields in a form are a 400 naming them, as with JSON; a reference image is refused clearly.
    await expect(client.videos.create({ model: "sora-2", prompt: "x", size: "640x480" as "720x1280" })).rejects.toMatchObject({ status: 400, param: "size" });
    const ref = await toFile(new Uint8Array([137, 80, 78, 71]), "ref.png", { type: "image/png" });
    await expect(client.videos.create({ model: "sora-2", prompt: "x", input_reference: ref })).rejects.toMatchObject({ status: 400, param: "input_reference" });
  });

  it("maps upstream failures to 502", async () => {
    const res = await call("/v1/videos", { method: "POST", key: org.key, ...json({ model: "sora-2", prompt: "x [[fake:status=500]]" }) });
    expect(res.status).toBe(502);
  });
});

describe("GET /v1/videos/{id}", () => {
  it("refreshes the status from the upstream (same organization only) and copies the finished file to R2", async () => {
    const created = await call("/v1/videos", { method: "POST", key: org.key, ...json({ prompt: "a polled video" }) });
    const job = (await created.json()) as VideoView;
    expect(job).toMatchObject({ model: "sora-2", seconds: "4", size: "720x1280" });

    expect((await call(`/v1/videos/${job.id}`, { key: other.key })).status).toBe(404);
    expect((await call(`/v1/videos/${job.id}`)).status).toBe(401);

    const res = await call(`/v1/videos/${job.id}`, { key: org.key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as VideoView;
    expect(body).toMatchObject({ id: job.id, status: "completed", progress: 100 });

    let extra: Record<string, unknown> | null = null;
    for (let i = 0; i < 40 && !extra?.r2Key; i++) {
      await new Promise((r) => setTimeout(r, 50));
      extra = (await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, job.id)).get())!.extra;
    }
    expect(extra).toMatchObject({ status: "completed", r2Key: `videos/${job.id}.mp4` });
    const obj = await env.UPLOADS.head(`videos/${job.id}.mp4`);
    expect(obj?.size).toBe(FAKE_LENGTH);

    // Now served from R2: R2's own validator, same bytes.
    const content = await call(`/v1/videos/logs/${job.id}/content`, { key: org.key, headers: { range: "bytes=0-3" } });
    expect(content.status).toBe(206);
    expect(content.headers.get("etag")).toBe(obj!.httpEtag);
    expect(content.headers.get("content-range")).toBe(`bytes 0-3/${FAKE_LENGTH}`);
    expect((await content.arrayBuffer()).byteLength).toBe(4);
  });
});

describe("failed video jobs", () => {
  it("refund the charge exactly once: organization credits, key spend and the log row", async () => {
    const payer = await seedOrg({ creditsUsd: 10 });
    const credits = async () => BigInt((await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(payer.orgId).first<{ c: string }>())!.c);
    const spend = async () => (await keyStateStub(env, payer.keyId).getSpend()).usage;
    const before = await credits();
    const created = await call("/v1/videos", { method: "POST", key: payer.key, ...json({ model: "sora-2", prompt: "a storm [[fake:video_fails]]", seconds: "4" }) });
    expect(created.status).toBe(200);
    const job = (await created.json()) as VideoView;
    expect(job.usage?.cost_usd).toBe("0.4");
    // Settlement runs in waitUntil: wait for the charge to land.
    for (let i = 0; i < 50 && (await credits()) === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await credits()).toBe(before - 400_000_000_000n);
    expect(await spend()).toBe(400_000_000_000n);

    const polled = await call(`/v1/videos/${job.id}`, { key: payer.key });
    expect(polled.status).toBe(200);
    const failed = (await polled.json()) as VideoView & { error: { message: string } | null };
    expect(failed).toMatchObject({ status: "failed", error: { message: "Your request was blocked by our moderation system." }, usage: { cost_usd: "0" } });
    expect(await credits()).toBe(before);
    expect(await spend()).toBe(0n);
    const row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, job.id)).get();
    expect(row).toMatchObject({ costPico: 0, creditsCostPico: 0, errorMessage: "video generation failed: Your request was blocked by our moderation system." });
    expect(row!.extra).toMatchObject({ status: "failed" });

    // Polling again (or concurrently) refunds nothing more.
    const again = await Promise.all([call(`/v1/videos/${job.id}`, { key: payer.key }), call(`/v1/videos/${job.id}`, { key: payer.key })]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    expect(await credits()).toBe(before);
    expect(await spend()).toBe(0n);
    // The hourly aggregates count the request once, at no cost (the refund's record cancels the charge).
    await waitForApplied([job.id, `${job.id}:refund`]);
    const agg = await env.DB.prepare("SELECT SUM(requests) AS n, CAST(SUM(cost_pico) AS TEXT) AS c, CAST(SUM(credits_cost_pico) AS TEXT) AS cr FROM usage_hourly WHERE api_key_id = ?").bind(payer.keyId).first();
    expect(agg).toEqual({ n: 1, c: "0", cr: "0" });
  });
});

describe("GET /v1/videos/logs/{log_id}/content", () => {
  const content = `/v1/videos/logs/${"LOGID"}/content`;
  const url = () => content.replace("LOGID", video.id);

  it("streams the whole file with the key of the same organization", async () => {
    const res = await call(url(), { key: org.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("content-length")).toBe(String(FAKE_LENGTH));
    expect((await res.arrayBuffer()).byteLength).toBe(FAKE_LENGTH);
  });

  it("answers 404 to another organization's key and 401 without credentials", async () => {
    const foreign = await call(url(), { key: other.key });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { error: { type: string } }).error.type).toBe("not_found_error");
    expect((await call(url())).status).toBe(401);
    expect((await call("/v1/videos/logs/log_AAAAAAAAAAAAAAAAAAAA/content", { key: org.key })).status).toBe(404);
  });

  it("passes byte ranges through: 206, 416, and 200 when If-Range does not match", async () => {
    const partial = await call(url(), { key: org.key, headers: { range: "bytes=100-199" } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe(`bytes 100-199/${FAKE_LENGTH}`);
    expect(partial.headers.get("content-length")).toBe("100");
    const bytes = new Uint8Array(await partial.arrayBuffer());
    expect(bytes.length).toBe(100);

    const full = await call(url(), { key: org.key });
    const all = new Uint8Array(await full.arrayBuffer());
    expect(Array.from(bytes)).toEqual(Array.from(all.slice(100, 200)));

    const etag = full.headers.get("etag")!;
    const matching = await call(url(), { key: org.key, headers: { range: "bytes=0-9", "if-range": etag } });
    expect(matching.status).toBe(206);
    await matching.arrayBuffer();
    const stale = await call(url(), { key: org.key, headers: { range: "bytes=0-9", "if-range": '"stale-etag"' } });
    expect(stale.status).toBe(200);
    expect((await stale.arrayBuffer()).byteLength).toBe(FAKE_LENGTH);

    const unsatisfiable = await call(url(), { key: org.key, headers: { range: `bytes=${FAKE_LENGTH + 5}-` } });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get("content-range")).toBe(`bytes */${FAKE_LENGTH}`);
  });

  it("accepts the signed content_url token without headers and rejects bad tokens", async () => {
    const res = await call(path(video.content_url));
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(FAKE_LENGTH);

    const token = new URL(video.content_url).searchParams.get("token")!;
    const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    expect((await call(`${url()}?token=${encodeURIComponent(tampered)}`)).status).toBe(401);
    expect((await call(`${url()}?token=garbage`)).status).toBe(401);
    const empty = await call(`${url()}?token=`);
    expect(empty.status).toBe(400);
    // A token is bound to its log id.
    expect((await call(`/v1/videos/logs/log_AAAAAAAAAAAAAAAAAAAA/content?token=${encodeURIComponent(token)}`)).status).toBe(401);
  });

  it("expires playback tokens", async () => {
    const now = Date.now();
    const { token } = await mintPlaybackToken(env, video.id, now);
    expect(await verifyPlaybackToken(env, video.id, token, now + 1000)).toBe(true);
    expect(await verifyPlaybackToken(env, video.id, token, now + PLAYBACK_TOKEN_TTL_S * 1000 + 1000)).toBe(false);
    const old = await mintPlaybackToken(env, video.id, now - (PLAYBACK_TOKEN_TTL_S + 60) * 1000);
    expect((await call(`${url()}?token=${encodeURIComponent(old.token)}`)).status).toBe(401);
  });

  it("serves files stored in R2 with ranges", async () => {
    const res = await call("/v1/videos", { method: "POST", key: org.key, ...json({ model: "sora-2", prompt: "stored", seconds: "4", size: "720x1280" }) });
    const v = (await res.json()) as VideoView;
    const data = new Uint8Array(300).map((_, i) => i % 251);
    await env.UPLOADS.put(`videos/${v.id}.mp4`, data, { httpMetadata: { contentType: "video/mp4" } });
    const row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, v.id)).get();
    await getDb(env.DB).update(requestLogs).set({ extra: { ...row!.extra, r2Key: `videos/${v.id}.mp4` } }).where(eq(requestLogs.id, v.id));

    const r = `/v1/videos/logs/${v.id}/content`;
    const full = await call(r, { key: org.key });
    expect(full.status).toBe(200);
    expect(full.headers.get("content-length")).toBe("300");
    expect(new Uint8Array(await full.arrayBuffer())).toEqual(data);
    const part = await call(r, { key: org.key, headers: { range: "bytes=-10" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 290-299/300");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(290));
    const bad = await call(r, { key: org.key, headers: { range: "bytes=400-500" } });
    expect(bad.status).toBe(416);
    const stale = await call(r, { key: org.key, headers: { range: "bytes=0-1", "if-range": '"nope"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });
});

describe("parseRange", () => {
  it("handles the byte-range forms", () => {
    expect(parseRange("bytes=0-9", 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange("bytes=90-", 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange("bytes=-5", 100)).toEqual({ start: 95, end: 99 });
    expect(parseRange("bytes=50-500", 100)).toEqual({ start: 50, end: 99 });
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=9-1", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-1,5-6", 100)).toBeNull();
    expect(parseRange("items=0-1", 100)).toBeNull();
  });
});

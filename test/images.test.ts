import { env } from "cloudflare:workers";
import { describe, expect, it, beforeAll } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { getDb } from "../src/db/client";
import { organizations, requestLogs } from "../src/db/schema";
import { resolveGatewayKey } from "../src/auth/gateway-key";
import { generateNanoBanana, validateFilename } from "../src/generation/nano-banana";
import { generateNanoBananaInput } from "../src/mcp/schemas";
import { storageCostPico } from "../src/billing/storage";
import { recorded } from "./helpers/recorded";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

async function waitFor<T>(fn: () => Promise<T | undefined | null>, tries = 40): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined && v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not reached");
}

const logRow = (id: string) => waitFor(() => getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, id)).get());

const isPng = (b64: string) => {
  const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
  return PNG_SIGNATURE.every((b, i) => bytes[i] === b);
};

interface ImagesResponse {
  created: number;
  model: string;
  data: Array<{ b64_json?: string; url?: string }>;
  usage: { images: number; cost_usd: string; output_tokens: number };
  metadata: { used_provider: string; used_model: string; log_id: string; request_id: string; organization_id: string; routing: Array<{ provider: string; succeeded: boolean; status_code: number }> };
}

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg({ creditsUsd: 10 });
});

describe("POST /v1/images/generations", () => {
  it("generates n images with gpt-image-1 through OpenAI, logs and bills the per-image price", async () => {
    const before = await getDb(env.DB).select({ c: organizations.creditsPico }).from(organizations).where(eq(organizations.id, org.orgId)).get();
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "a red fox [[tag:img-openai]]", model: "gpt-image-1", n: 2 }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse;
    expect(body.model).toBe("gpt-image-1");
    expect(body.data).toHaveLength(2);
    for (const d of body.data) expect(isPng(d.b64_json!)).toBe(true);
    expect(body.metadata.used_provider).toBe("openai");
    expect(body.metadata.organization_id).toBe(org.orgId);
    expect(body.metadata.request_id).toBe(res.headers.get("x-request-id"));
    expect(body.usage.cost_usd).toBe("0.084");

    const sent = await recorded("img-openai");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe("/images/generations");
    expect(sent[0]!.headers.authorization).toBe("Bearer test-operator-key-openai");
    expect(sent[0]!.body).toMatchObject({ model: "gpt-image-1", n: 2, size: "1024x1024" });
    expect(sent[0]!.body).not.toHaveProperty("response_format");

    const log = await logRow(body.metadata.log_id);
    expect(log).toMatchObject({ kind: "image", statusCode: 200, usedProvider: "openai", usedModel: "gpt-image-1", apiKeyId: org.keyId, costPico: 84_000_000_000, creditsCostPico: 84_000_000_000 });
    const after = await waitFor(async () => {
      const r = await getDb(env.DB).select({ c: organizations.creditsPico }).from(organizations).where(eq(organizations.id, org.orgId)).get();
      return r && r.c !== before!.c ? r : undefined;
    });
    expect(before!.c - after.c).toBe(84_000_000_000);
  });

  it("defaults to qwen-image-3.0 on Alibaba DashScope at 1024x1024 and returns the provider's URLs", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "a poster [[tag:img-qwen]]" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse;
    expect(body.model).toBe("qwen-image-3.0");
    expect(body.metadata.used_provider).toBe("alibaba");
    expect(body.data[0]!.url).toMatch(/\/alibaba\/__images\/result-0\.png/);
    expect(body.usage.cost_usd).toBe("0.035");
    const sent = await recorded("img-qwen");
    expect(sent[0]!.path).toBe("/api/v1/services/aigc/multimodal-generation/generation");
    expect(sent[0]!.headers.authorization).toBe("Bearer test-operator-key-alibaba");
    expect(sent[0]!.body).toMatchObject({
      model: "qwen-image-3.0",
      input: { messages: [{ role: "user", content: [{ text: "a poster [[tag:img-qwen]]" }] }] },
      parameters: { size: "1024*1024", n: 1 },
    });
  });

  it("downloads provider URLs for response_format=b64_json (pinned provider id)", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "two posters", model: "alibaba/qwen-image-3.0", n: 2, size: "1664x928", response_format: "b64_json" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse & { metadata: { requested_provider: string } };
    expect(body.data).toHaveLength(2);
    for (const d of body.data) {
      expect(d.url).toBeUndefined();
      expect(isPng(d.b64_json!)).toBe(true);
    }
    expect(body.metadata.requested_provider).toBe("alibaba");
    expect(body.usage.cost_usd).toBe("0.07");
  });

  it("uses the organization's own provider key (BYOK) without debiting credits", async () => {
    const byokOrg = await seedOrg({ creditsUsd: 5 });
    const pk = await call("/v1/master/provider-keys", { method: "POST", key: byokOrg.masterKey, ...json({ provider: "alibaba", token: "byok-alibaba-0123456789" }) });
    expect(pk.status).toBe(201);
    const res = await call("/v1/images/generations", { method: "POST", key: byokOrg.key, ...json({ prompt: "byok [[tag:img-byok]]", model: "qwen-image-3.0" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse & { metadata: { routing: Array<{ credentialSource: string }> } };
    expect(body.metadata.routing[0]!.credentialSource).toBe("byok");
    const sent = await recorded("img-byok");
    expect(sent[0]!.headers.authorization).toBe("Bearer byok-alibaba-0123456789");
    const log = await logRow(body.metadata.log_id);
    expect(log).toMatchObject({ costPico: 35_000_000_000, byokCostPico: 35_000_000_000, creditsCostPico: 0 });
    const credits = await getDb(env.DB).select({ c: organizations.creditsPico }).from(organizations).where(eq(organizations.id, byokOrg.orgId)).get();
    expect(credits!.c).toBe(5_000_000_000_000);
  });

  it("converts b64 to a data URL for response_format=url", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "a cat", model: "gpt-image-1", response_format: "url" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse;
    expect(body.data[0]!.url).toMatch(/^data:image\/png;base64,iVBOR/);
    expect(body.data[0]!.b64_json).toBeUndefined();
  });

  it("routes Gemini image models through generateContent with the size's aspect ratio", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "a lighthouse [[tag:img-gemini]]", model: "gemini-2.5-flash-image", size: "1344x768" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ImagesResponse;
    expect(body.metadata.used_provider).toBe("google-ai-studio");
    expect(isPng(body.data[0]!.b64_json!)).toBe(true);
    expect(body.usage.output_tokens).toBe(1290);
    const sent = await recorded<{ generationConfig: unknown }>("img-gemini");
    expect(sent[0]!.path).toBe("/v1beta/models/gemini-2.5-flash-image:generateContent");
    expect(sent[0]!.headers["x-goog-api-key"]).toBe("test-operator-key-google-ai-studio");
    expect(sent[0]!.body.generationConfig).toEqual({ responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "16:9" } });
  });

  it("validates the body", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: "gpt-image-1" }, "prompt"],
      [{ prompt: "x", n: 5, model: "gpt-image-1" }, "n"],
      [{ prompt: "x", n: 0, model: "gpt-image-1" }, "n"],
      [{ prompt: "x", model: "gpt-image-1", size: "999x999" }, "size"],
      [{ prompt: "x", model: "gpt-4o-mini" }, "model"],
      [{ prompt: "x", model: "no-such-model" }, "model"],
      [{ prompt: "x", model: "gpt-image-1", response_format: "jpeg" }, "response_format"],
    ];
    for (const [payload, param] of cases) {
      const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json(payload) });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      const err = (await res.json()) as { error: { param: string | null; type: string } };
      expect(err.error.param).toBe(param);
      expect(err.error.type).toBe("invalid_request_error");
    }
  });

  it("enforces IAM rules (403) and logs the refusal", async () => {
    const denied = await addKey(org, { description: "no gpt-image", iamRules: [{ ruleType: "deny_models", ruleValue: { models: ["gpt-image-1"] } }] });
    const res = await call("/v1/images/generations", { method: "POST", key: denied.token, ...json({ prompt: "x", model: "gpt-image-1" }) });
    expect(res.status).toBe(403);
    const err = (await res.json()) as { error: { type: string; code: string } };
    expect(err.error).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });
    const log = await waitFor(() => getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.requestId, res.headers.get("x-request-id")!)).get());
    expect(log).toMatchObject({ kind: "image", statusCode: 403, costPico: 0, apiKeyId: denied.row.id });
    const ok = await call("/v1/images/generations", { method: "POST", key: denied.token, ...json({ prompt: "x", model: "qwen-image-3.0" }) });
    expect(ok.status).toBe(200);
  });

  it("refuses keys whose spend limit is reached (401)", async () => {
    const capped = await addKey(org, { description: "capped", usageLimit: "0.04" });
    const first = await call("/v1/images/generations", { method: "POST", key: capped.token, ...json({ prompt: "x", model: "qwen-image-3.0" }) });
    expect(first.status).toBe(200);
    const body = (await first.json()) as ImagesResponse;
    await logRow(body.metadata.log_id);
    let status = 0;
    let refusedId = "";
    for (let i = 0; i < 20 && status !== 401; i++) {
      const r = await call("/v1/images/generations", { method: "POST", key: capped.token, ...json({ prompt: "x", model: "qwen-image-3.0" }) });
      status = r.status;
      refusedId = r.headers.get("x-request-id")!;
      await r.arrayBuffer();
    }
    expect(status).toBe(401);
    // Logged like chat's refusals: a row with the status, no cost.
    const refused = await waitFor(() => getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.requestId, refusedId)).get());
    expect(refused).toMatchObject({ kind: "image", statusCode: 401, costPico: 0, apiKeyId: capped.row.id, usedModel: "qwen-image-3.0" });
  });

  it("refuses provider-pinned ids for coding-plan keys", async () => {
    const plan = await addKey(org, { kind: "coding-plan", description: "plan" });
    const pinned = await call("/v1/images/generations", { method: "POST", key: plan.token, ...json({ prompt: "x", model: "openai/gpt-image-1" }) });
    expect(pinned.status).toBe(400);
    expect(((await pinned.json()) as { error: { param: string } }).error.param).toBe("model");
    const canonical = await call("/v1/images/generations", { method: "POST", key: plan.token, ...json({ prompt: "x", model: "gpt-image-1" }) });
    expect(canonical.status).toBe(200);
  });

  it("requires a gateway key", async () => {
    const res = await call("/v1/images/generations", { method: "POST", ...json({ prompt: "x", model: "gpt-image-1" }) });
    expect(res.status).toBe(401);
    const bad = await call("/v1/images/generations", { method: "POST", key: "swb_" + "x".repeat(40), ...json({ prompt: "x", model: "gpt-image-1" }) });
    expect(bad.status).toBe(401);
  });

  it("maps an upstream failure to 502 and logs it without charging", async () => {
    const res = await call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt: "boom [[fake:status=500]]", model: "gpt-image-1" }) });
    expect(res.status).toBe(502);
    const err = (await res.json()) as { error: { type: string; code: string } };
    expect(err.error.type).toBe("upstream_error");
    const log = await waitFor(() =>
      getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.requestId, res.headers.get("x-request-id")!)).get(),
    );
    expect(log).toMatchObject({ kind: "image", statusCode: 502, costPico: 0 });
    expect(log.routing[0]).toMatchObject({ provider: "openai", status_code: 500, succeeded: false });
  });
});

describe("generateNanoBanana", () => {
  const deps = async (extraEnv: Partial<Env> = {}) => {
    const pending: Promise<unknown>[] = [];
    return {
      pending,
      deps: {
        env: { ...env, ...extraEnv } as Env,
        waitUntil: (p: Promise<unknown>) => void pending.push(p),
        auth: await resolveGatewayKey(env, org.key),
        requestId: `req_test_${crypto.randomUUID()}`,
        sourceApp: "test",
        clientIp: null,
      },
    };
  };

  it("returns the image inline and saves nothing without UPLOAD_DIR", async () => {
    const { deps: d, pending } = await deps({ UPLOAD_DIR: undefined });
    const out = await generateNanoBanana({ ...d, prompt: "a banana", aspect_ratio: "16:9" });
    await Promise.all(pending);
    expect(isPng(out.b64)).toBe(true);
    expect(out.mimeType).toBe("image/png");
    expect(out.aspectRatio).toBe("16:9");
    expect(out.saved).toBeNull();
    expect(out.filename).toMatch(/^nano-banana-\d+\.png$/);
    expect(out.metadata.used_provider).toBe("google-ai-studio");
    const listed = await env.UPLOADS.list();
    expect(listed.objects.filter((o) => o.key.includes(out.filename))).toHaveLength(0);
  });

  it("saves to UPLOADS under UPLOAD_DIR when the deployment sets it", async () => {
    const { deps: d, pending } = await deps({ UPLOAD_DIR: "generated/" });
    const out = await generateNanoBanana({ ...d, prompt: "a banana boat", filename: "boat.png" });
    await Promise.all(pending);
    expect(out.saved).toEqual({ bucket: "UPLOADS", key: "generated/boat.png", bytes: atob(out.b64).length });
    const obj = await env.UPLOADS.get("generated/boat.png");
    expect(obj).not.toBeNull();
    expect(obj!.httpMetadata?.contentType).toBe("image/png");
    const bytes = new Uint8Array(await obj!.arrayBuffer());
    expect(Array.from(bytes.slice(0, 4))).toEqual(PNG_SIGNATURE);
    // The save is priced as data storage, apart from the inference cost.
    const log = await logRow(out.metadata.log_id);
    expect(log.dataStorageCostPico).toBe(Number(storageCostPico(out.saved!.bytes)));
    expect(log.dataStorageCostPico).toBeGreaterThan(0);
    expect(log.costPico).toBeGreaterThan(0);
  });

  it("logs no storage cost when nothing is saved", async () => {
    const { deps: d, pending } = await deps({ UPLOAD_DIR: undefined });
    const out = await generateNanoBanana({ ...d, prompt: "a banana" });
    await Promise.all(pending);
    expect((await logRow(out.metadata.log_id)).dataStorageCostPico).toBe(0);
  });

  it("the filename check and the MCP tool schema are one rule", async () => {
    const { deps: d, pending } = await deps({ UPLOAD_DIR: "generated" });
    const out = await generateNanoBanana({ ...d, prompt: "x", filename: "-dash.png" });
    await Promise.all(pending);
    expect(out.saved?.key).toBe("generated/-dash.png");
    const names = ["-dash.png", "_x", "a b.png", "../evil.png", "a/b.png", "a\\b.png", "..", ".hidden", " lead", "x".repeat(201), "tab\tname"];
    for (const filename of names) {
      const schemaOk = generateNanoBananaInput.filename.safeParse(filename).success;
      let checkOk = true;
      try {
        validateFilename(filename);
      } catch {
        checkOk = false;
      }
      expect(checkOk, filename).toBe(schemaOk);
    }
  });

  it("rejects path-like filenames and unknown aspect ratios", async () => {
    const { deps: d } = await deps({ UPLOAD_DIR: "generated" });
    for (const filename of ["../evil.png", "a/b.png", "a\\b.png", "..", ".hidden"]) {
      await expect(generateNanoBanana({ ...d, prompt: "x", filename })).rejects.toMatchObject({ status: 400, param: "filename" });
    }
    await expect(generateNanoBanana({ ...d, prompt: "x", aspect_ratio: "21:9" })).rejects.toMatchObject({ status: 400, param: "aspect_ratio" });
  });
});

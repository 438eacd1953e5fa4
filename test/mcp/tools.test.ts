/** Every MCP tool called through the official SDK client against the real Worker. */
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { requestLogs } from "../../src/db/schema";
import { connectClient, textOf } from "./helpers";

let org: SeededOrg;
let client: Client;

beforeAll(async () => {
  org = await seedOrg();
  client = await connectClient(org.key, { headers: { "x-source": "Claude Code", "user-agent": "mcp-test/1.0" } });
});

afterAll(async () => {
  await client.close();
});

type ToolResult = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ type: string; text?: string; data?: string; mimeType?: string }> };
const callTool = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as ToolResult;

async function logFor(requestModel: string): Promise<typeof requestLogs.$inferSelect | undefined> {
  const db = getDb(env.DB);
  for (let i = 0; i < 20; i++) {
    const rows = await db.select().from(requestLogs).where(and(eq(requestLogs.apiKeyId, org.keyId), eq(requestLogs.requestedModel, requestModel))).limit(1);
    if (rows[0]) return rows[0];
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

describe("catalogue tools", () => {
  it("list-models: chat models with capabilities and pricing, limit and family filter", async () => {
    const r = await callTool("list-models", {});
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent!;
    expect(JSON.parse(textOf(r))).toEqual(s);
    expect(s.models.length).toBeGreaterThan(0);
    expect(s.models.length).toBeLessThanOrEqual(20);
    expect(s.returned).toBe(s.models.length);
    const m = s.models[0];
    expect(typeof m.capabilities.tools).toBe("boolean");
    expect(m.pricing.prompt).toMatch(/^\d+(\.\d+)?$/);
    expect(m.providers.length).toBeGreaterThan(0);
    const two = (await callTool("list-models", { limit: 2 })).structuredContent!;
    expect(two.models).toHaveLength(2);
    const mini = (await callTool("list-models", { family: m.family, limit: 500 })).structuredContent!;
    expect(mini.models.every((x: { family: string }) => x.family === m.family)).toBe(true);
    const all = (await callTool("list-models", { include_deactivated: true, limit: 500 })).structuredContent!;
    expect(all.total).toBeGreaterThanOrEqual(s.total);
    const bad = await callTool("list-models", { limit: "many" });
    expect(bad.isError).toBe(true);
  });

  it("list-image-models: image models including the defaults", async () => {
    const r = await callTool("list-image-models");
    const s = r.structuredContent!;
    const ids = s.models.map((m: { id: string }) => m.id);
    expect(ids).toContain("qwen-image-3.0");
    expect(ids).toContain("gemini-2.5-flash-image");
    expect(s.defaultModel).toBe("qwen-image-3.0");
  });
});

describe("generation tools", () => {
  it("chat: assistant text with usage and cost; attribution kept", async () => {
    const r = await callTool("chat", { model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello" }], temperature: 0.2, max_tokens: 50 });
    expect(r.isError, textOf(r)).toBeFalsy();
    const s = r.structuredContent!;
    expect(typeof s.content).toBe("string");
    expect(s.content.length).toBeGreaterThan(0);
    expect(s.usage.total_tokens).toBeGreaterThan(0);
    expect(s.usage.cost_usd).toBeGreaterThan(0);
    expect(textOf(r)).toContain(s.content);
    const log = await logFor("gpt-4o-mini");
    expect(log?.sourceApp).toBe("claude-code");
  });

  it("chat: validation and gateway errors are tool errors", async () => {
    const hot = await callTool("chat", { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], temperature: 3 });
    expect(hot.isError).toBe(true);
    const unknown = await callTool("chat", { model: "no-such-model-xyz", messages: [{ role: "user", content: "x" }] });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/HTTP 4\d\d/);
  });

  it("generate-image: image content blocks plus structured info", async () => {
    const r = await callTool("generate-image", { prompt: "a lighthouse at dusk", n: 2 });
    expect(r.isError, textOf(r)).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.model).toBe("qwen-image-3.0");
    expect(s.images).toHaveLength(2);
    const blocks = r.content.filter((c) => c.type === "image" || (c.type === "text" && /^Image \d/.test(c.text ?? "")));
    expect(blocks).toHaveLength(2);
    const tooMany = await callTool("generate-image", { prompt: "x", n: 5 });
    expect(tooMany.isError).toBe(true);
  });

  it("generate-image takes size auto as the images route does; a malformed size is still refused", async () => {
    const auto = await callTool("generate-image", { prompt: "a lighthouse at dusk", size: "auto" });
    expect(auto.isError, textOf(auto)).toBeFalsy();
    expect(auto.structuredContent!.images).toHaveLength(1);
    const bad = await callTool("generate-image", { prompt: "x", size: "huge" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/WIDTHxHEIGHT/);
  });

  it("generate-nano-banana: inline image, not saved without UPLOAD_DIR; filename checked", async () => {
    const r = await callTool("generate-nano-banana", { prompt: "a banana", aspect_ratio: "16:9" });
    expect(r.isError, textOf(r)).toBeFalsy();
    const img = r.content.find((c) => c.type === "image");
    expect(img?.data?.length).toBeGreaterThan(0);
    expect(r.structuredContent!.saved).toBe(false);
    expect(r.structuredContent!.path).toBeNull();
    const bad = await callTool("generate-nano-banana", { prompt: "x", filename: "../etc/passwd" });
    expect(bad.isError).toBe(true);
    const ratio = await callTool("generate-nano-banana", { prompt: "x", aspect_ratio: "2:1" });
    expect(ratio.isError).toBe(true);
  });
});

describe("account tool", () => {
  it("get-account returns user, org, project, role, scope and limits, never secrets", async () => {
    const r = await callTool("get-account");
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent!;
    expect(s.user.email).toBe(org.ownerEmail);
    expect(s.organization.id).toBe(org.orgId);
    expect(s.project.id).toBe(org.projectId);
    expect(s.role).toBe("owner");
    expect(s.analyticsScope.type).toBe("project");
    expect(s.apiKey.spendingLimits).toMatchObject({ usageLimitUsd: null, periodUsageLimitUsd: null });
    expect(s.authentication.method).toBe("api_key");
    expect(JSON.stringify(r)).not.toContain(org.key);
  });
});

/**
 * The `/mcp` setup page and MCP attribution: the Inspector command names an exact release, every
 * tool is listed with the description `tools/list` gives, and a request made through MCP by a
 * client that names no app is recorded, and shown on the Requests page, as app "MCP".
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { requestLogs } from "../../src/db/schema";
import { signIn } from "../dashboard/session";
import { BASE, connectClient, workerFetch } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

const unescapeHtml = (s: string): string => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

describe("/mcp setup page", () => {
  it("pins the Inspector to an exact release and lists each tool with its tools/list description", async () => {
    const res = await workerFetch(`${BASE}/mcp`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    const html = unescapeHtml(await res.text());
    expect(html).toMatch(/npx -y @modelcontextprotocol\/inspector@\d+\.\d+\.\d+ --cli \S+\/mcp --transport http /);

    const client = await connectClient(org.key);
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.length).toBe(8);
    for (const t of tools) {
      expect(t.description, t.name).toBeTruthy();
      expect(html, t.name).toContain(`<li><code>${t.name}</code>: ${t.description}</li>`);
    }
  });
});

describe("MCP attribution", () => {
  async function logOf(model: string) {
    const db = getDb(env.DB);
    for (let i = 0; i < 40; i++) {
      const row = (await db.select().from(requestLogs).where(and(eq(requestLogs.apiKeyId, org.keyId), eq(requestLogs.requestedModel, model))).limit(1))[0];
      if (row) return row;
      await new Promise((r) => setTimeout(r, 50));
    }
    return undefined;
  }

  it("records a chat through MCP with no named app as 'mcp' and the Requests page shows MCP", async () => {
    const client = await connectClient(org.key, { headers: { "user-agent": "node" } });
    const r = (await client.callTool({ name: "chat", arguments: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] } })) as { isError?: boolean };
    await client.close();
    expect(r.isError).toBeFalsy();
    const log = await logOf("gpt-4o-mini");
    expect(log?.sourceApp).toBe("mcp");

    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const html = await (await call(`/dashboard/requests/${log!.id}?at=${log!.createdAt}`, { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    expect(html).toMatch(/App[\s\S]{0,200}MCP/);
    expect(html).not.toMatch(/>unknown</);
  });

  it("keeps the app an MCP client names itself", async () => {
    const client = await connectClient(org.key, { headers: { "x-source": "Claude Code" } });
    await client.callTool({ name: "chat", arguments: { model: "gpt-4.1-mini", messages: [{ role: "user", content: "hi" }] } });
    await client.close();
    expect((await logOf("gpt-4.1-mini"))?.sourceApp).toBe("claude-code");
  });
});

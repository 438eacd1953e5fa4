/**
 * Contract section 7: a /mcp request with an Origin header is served only from the gateway's own
 * origin or one listed in ALLOWED_ORIGINS; any other is 403. The own origin is PUBLIC_URL's; without
 * it, the request's own origin only when its host is loopback (DNS rebinding).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { BASE, initializeMessage, rpc, workerFetch } from "./helpers";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

const ping = { jsonrpc: "2.0", id: 1, method: "ping" };

async function withEnv(vars: Record<string, string>, url: string, init: RequestInit<IncomingRequestCfProperties>): Promise<Response> {
  const props = Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { value: v, enumerable: true }]));
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(url, init), Object.create(env, props) as typeof env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const post = (key: string, origin?: string): RequestInit<IncomingRequestCfProperties> => ({
  method: "POST",
  headers: {
    authorization: `Bearer ${key}`,
    "content-type": "application/json",
    accept: "application/json",
    ...(origin ? { origin } : {}),
  },
  body: JSON.stringify(ping),
});

describe("MCP Origin validation", () => {
  it("a foreign Origin is 403 with a JSON-RPC error, before authentication", async () => {
    for (const key of [org.key, undefined]) {
      const res = await rpc(initializeMessage(), { key, headers: { origin: "http://evil.example.com" } });
      expect(res.status).toBe(403);
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.message).toContain("http://evil.example.com");
      expect(body.error.message).toContain("ALLOWED_ORIGINS");
    }
  });

  it("GET, DELETE and the preflight from a foreign Origin are 403 too; 'null' is foreign", async () => {
    const get = await workerFetch(`${BASE}/mcp`, { headers: { accept: "application/json", origin: "https://evil.example.com" } });
    expect(get.status).toBe(403);
    const del = await workerFetch(`${BASE}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${org.key}`, origin: "https://evil.example.com" } });
    expect(del.status).toBe(403);
    const preflight = await workerFetch(`${BASE}/mcp`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    const nullOrigin = await rpc(ping, { key: org.key, headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);
  });

  it("no Origin is served; without PUBLIC_URL, the request's own origin is served when its host is loopback", async () => {
    expect((await rpc(ping, { key: org.key })).status).toBe(200);
    for (const base of ["http://localhost:8787", "http://127.0.0.1:8787", "http://127.8.9.10", "http://[::1]:8787"]) {
      // as a browser sends it (a Request built here has no Host header of its own)
      const init = post(org.key, base);
      const own = await workerFetch(`${base}/mcp`, { ...init, headers: { ...(init.headers as Record<string, string>), host: new URL(base).host } });
      expect(own.status, base).toBe(200);
      expect(await own.json()).toMatchObject({ id: 1, result: {} });
      const preflight = await workerFetch(`${base}/mcp`, { method: "OPTIONS", headers: { origin: base, host: new URL(base).host, "access-control-request-method": "POST" } });
      expect(preflight.status, base).toBeLessThan(300);
    }
  });

  it("DNS rebinding: without PUBLIC_URL, Origin and Host both naming a non-loopback host are 403", async () => {
    for (const base of ["http://rebind.attacker.example:8880", BASE, "http://localhost.attacker.example", "http://127.0.0.1.nip.io", "http://10.0.0.5:8787"]) {
      const init = post(org.key, base);
      const res = await workerFetch(`${base}/mcp`, { ...init, headers: { ...(init.headers as Record<string, string>), host: new URL(base).host } });
      expect(res.status, base).toBe(403);
      const preflight = await workerFetch(`${base}/mcp`, { method: "OPTIONS", headers: { origin: base, "access-control-request-method": "POST" } });
      expect(preflight.status, base).toBe(403);
    }
    // a loopback Origin on a request to another host is not its own origin either
    expect((await workerFetch("http://rebind.attacker.example/mcp", post(org.key, "http://localhost"))).status).toBe(403);
  });

  it("with PUBLIC_URL set, its origin is the gateway's own and the request's host is not", async () => {
    const vars = { PUBLIC_URL: "https://gateway.example.com/" };
    expect((await withEnv(vars, "http://internal-host.test/mcp", post(org.key, "https://gateway.example.com"))).status).toBe(200);
    expect((await withEnv(vars, "http://internal-host.test/mcp", post(org.key, "http://internal-host.test"))).status).toBe(403);
    expect((await withEnv(vars, "http://internal-host.test/mcp", post(org.key))).status).toBe(200);
  });

  it("origins listed in ALLOWED_ORIGINS are served; others still 403", async () => {
    const vars = { ALLOWED_ORIGINS: " https://app.example.com , http://localhost:5173/,not a url" };
    for (const origin of ["https://app.example.com", "https://APP.example.com", "http://localhost:5173"]) {
      const res = await withEnv(vars, `${BASE}/mcp`, post(org.key, origin));
      expect(res.status, origin).toBe(200);
    }
    for (const origin of ["https://app.example.com:8443", "http://app.example.com", "https://evil.example.com", "not a url", BASE]) {
      const res = await withEnv(vars, `${BASE}/mcp`, post(org.key, origin));
      expect(res.status, origin).toBe(403);
    }
  });

  it("the legacy transport (/sse, /messages) follows the same rule", async () => {
    const foreign = "http://rebind.attacker.example:8880";
    // A rebinding page: Origin and Host both name the attacker, and PUBLIC_URL is unset.
    const open = await workerFetch(`${foreign}/sse`, { headers: { accept: "text/event-stream", authorization: `Bearer ${org.key}`, origin: foreign, host: new URL(foreign).host } });
    expect(open.status).toBe(403);
    expect(((await open.json()) as { error: { message: string } }).error.message).toContain("ALLOWED_ORIGINS");
    const message = await workerFetch(`${foreign}/messages?sessionId=anything`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", origin: foreign, host: new URL(foreign).host },
      body: JSON.stringify(ping),
    });
    expect(message.status).toBe(403);
    for (const path of ["/sse", "/messages"]) {
      const preflight = await workerFetch(`${BASE}${path}`, { method: "OPTIONS", headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" } });
      expect(preflight.status, path).toBe(403);
    }
    // The gateway's own loopback origin and no Origin at all still open a stream.
    const cases: [string, Record<string, string>][] = [["http://localhost:8787", { origin: "http://localhost:8787", host: "localhost:8787" }], [BASE, {}]];
    for (const [base, extra] of cases) {
      const own = await workerFetch(`${base}/sse`, { headers: { accept: "text/event-stream", authorization: `Bearer ${org.key}`, ...extra } });
      expect(own.status).toBe(200);
      await own.body?.cancel();
    }
  });
});

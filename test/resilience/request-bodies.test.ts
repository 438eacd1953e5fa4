/**
 * A refusal never cancels or abandons the request body: it is read to its end (and discarded)
 * before the answer goes out. Under `wrangler dev`, a body cancelled (or left unread) while the
 * client was still sending it broke the connection, and the next request on it got 503 "Your
 * worker restarted mid-request" or hung. Here each refusal gets a body that records how it was
 * treated: read to the end, cancelled, or left.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { seedOrg } from "../helpers/fixtures";

interface Tracked {
  body: ReadableStream<Uint8Array>;
  state: () => "read" | "cancelled" | "left";
}

/** A body of `chunks` pieces that remembers whether it was read to the end or cancelled. */
function trackedBody(text: string, chunks = 8): Tracked {
  const bytes = new TextEncoder().encode(text);
  const size = Math.ceil(bytes.byteLength / chunks);
  let i = 0;
  let state: "read" | "cancelled" | "left" = "left";
  const body = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (i * size >= bytes.byteLength) {
        state = "read";
        ctl.close();
        return;
      }
      ctl.enqueue(bytes.slice(i * size, (i + 1) * size));
      i++;
    },
    cancel() {
      state = "cancelled";
    },
  });
  return { body, state: () => state };
}

async function send(path: string, headers: Record<string, string>, text: string): Promise<{ status: number; body: "read" | "cancelled" | "left" }> {
  const t = trackedBody(text);
  const res = await app.fetch(new Request(`http://gw.test${path}`, { method: "POST", headers, body: t.body, duplex: "half" } as RequestInit), env, createExecutionContext());
  await res.text();
  return { status: res.status, body: t.state() };
}

const rpc = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(50_000) } });
const chatBody = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x ".repeat(20_000) }] });

describe("refusals read the request body to its end", () => {
  it("POST /mcp with a foreign Origin: 403, body read, not cancelled", async () => {
    const org = await seedOrg();
    const r = await send("/mcp", { origin: "https://evil.example", "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${org.key}` }, rpc);
    expect(r).toEqual({ status: 403, body: "read" });
  });

  it("POST /mcp with an Accept it cannot serve: 406, body read", async () => {
    const org = await seedOrg();
    const r = await send("/mcp", { "content-type": "application/json", accept: "text/plain", authorization: `Bearer ${org.key}` }, rpc);
    expect(r).toEqual({ status: 406, body: "read" });
  });

  it("chat refusals before the body is parsed (401 unknown key, 400 content type): body read", async () => {
    const unknown = await send("/v1/chat/completions", { "content-type": "application/json", authorization: "Bearer swb_not_a_key" }, chatBody);
    expect(unknown).toEqual({ status: 401, body: "read" });
    const org = await seedOrg();
    const wrongType = await send("/v1/chat/completions", { "content-type": "text/plain", authorization: `Bearer ${org.key}` }, chatBody);
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toBe("read");
  });
});

/**
 * Session of the legacy HTTP+SSE MCP transport (spec 4.3: "the original HTTP+SSE bridge").
 *
 * `GET /sse` (src/mcp/sse.ts) authenticates, then opens the stream here: this object holds the
 * stream's writer, first sends the `endpoint` event (`/messages?sessionId=<this object's id>`),
 * and keeps the stream alive with comments. `POST /messages?sessionId=` authenticates again and
 * hands the JSON-RPC message to `deliver`; the message is processed here (a fresh McpServer bound
 * to that POST's key context) and the reply goes out on the stream. Because the session is a
 * Durable Object, the POST can land on any isolate. Only the key that opened a session may post
 * to it.
 */
import { DurableObject } from "cloudflare:workers";
import { specTypeSchemas, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/server";
import type { Env } from "../env";
import type { McpAuth } from "./auth";
import { createMcpServer } from "./server";
import { invalidParams, invalidParamsReply } from "./protocol";

const KEEPALIVE_MS = 25_000;
const encoder = new TextEncoder();

export interface SseDelivery {
  message: unknown;
  auth: McpAuth;
  requestId: string;
  sourceApp: string;
  clientIp: string | null;
  headers: Array<[string, string]>;
  origin: string;
}

export type SseDeliveryResult =
  | { ok: true }
  | { ok: false; status: 400 | 403 | 404; code: number; message: string };

/** A transport for exactly one incoming message; what the server sends goes to `write`. */
class SingleMessageTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  private settle: () => void = () => undefined;
  readonly done: Promise<void>;

  constructor(
    private readonly write: (message: JSONRPCMessage) => Promise<void>,
    private readonly awaitedId: string | number | null,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    if (awaitedId === null) this.settle();
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(message);
    if (("result" in message || "error" in message) && message.id === this.awaitedId) this.settle();
  }

  async close(): Promise<void> {
    this.settle();
    this.onclose?.();
  }
}

export class McpSseSession extends DurableObject<Env> {
  private writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  private ownerKeyId: string | null = null;
  private keepalive: ReturnType<typeof setInterval> | null = null;

  /** Opens the SSE stream (called through `fetch` so the stream can be returned). */
  override async fetch(request: Request): Promise<Response> {
    const body = (await request.json()) as { keyId?: unknown; endpoint?: unknown };
    if (typeof body.keyId !== "string" || typeof body.endpoint !== "string") return new Response("bad open request", { status: 400 });
    this.closeStream();
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    this.writer = writer;
    this.ownerKeyId = body.keyId;
    // The client went away (stream cancelled): the session is closed at once, so later messages
    // get 404 instead of a 202 whose reply nobody reads.
    writer.closed.catch(() => undefined).finally(() => {
      if (this.writer === writer) this.closeStream();
    });
    void this.writeRaw(`event: endpoint\ndata: ${body.endpoint}\n\n`);
    this.keepalive = setInterval(() => void this.writeRaw(": keepalive\n\n"), KEEPALIVE_MS);
    return new Response(readable, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }

  /** Hands one JSON-RPC message to the session; the reply is written to the stream. */
  async deliver(d: SseDelivery): Promise<SseDeliveryResult> {
    if (!this.writer) return { ok: false, status: 404, code: -32001, message: "Session not found or closed; open a new one with GET /sse." };
    if (d.auth.context.key.id !== this.ownerKeyId) {
      return { ok: false, status: 403, code: -32001, message: "This session belongs to another API key." };
    }
    const parsed = specTypeSchemas.JSONRPCMessage["~standard"].validate(d.message);
    if (parsed instanceof Promise || parsed.issues) return { ok: false, status: 400, code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message." };
    const message = parsed.value;
    const bad = invalidParams(message);
    if (bad) {
      await this.writeRaw(`event: message\ndata: ${JSON.stringify(invalidParamsReply(bad))}\n\n`);
      return { ok: true };
    }
    const id = "method" in message && "id" in message ? message.id : null;

    const server = createMcpServer({
      env: this.env,
      waitUntil: (p) => this.ctx.waitUntil(p),
      auth: d.auth,
      requestId: d.requestId,
      sourceApp: d.sourceApp,
      clientIp: d.clientIp,
      headers: new Headers(d.headers),
      origin: d.origin,
    });
    const transport = new SingleMessageTransport((m) => this.writeRaw(`event: message\ndata: ${JSON.stringify(m)}\n\n`), id);
    await server.connect(transport);
    transport.onmessage?.(message);
    // The POST is answered 202 at once; the work finishes here and replies on the stream.
    this.ctx.waitUntil(transport.done.finally(() => server.close().catch(() => undefined)));
    return { ok: true };
  }

  private async writeRaw(text: string): Promise<void> {
    const w = this.writer;
    if (!w) return;
    try {
      await w.write(encoder.encode(text));
    } catch {
      // The client went away: forget the stream.
      if (this.writer === w) this.closeStream();
    }
  }

  private closeStream(): void {
    if (this.keepalive !== null) clearInterval(this.keepalive);
    this.keepalive = null;
    const w = this.writer;
    this.writer = null;
    if (w) w.close().catch(() => undefined);
  }
}

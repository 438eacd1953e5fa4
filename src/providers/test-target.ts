/** Builds UpstreamTargets for adapter tests (no catalogue needed). Test-only. */
import type { ProviderInfo, ProviderMapping, WireFormat } from "../catalog/types";
import type { BuildOptions, ChatRequest, ProviderAdapter, UpstreamCall, UpstreamTarget } from "./types";
import { crc32 } from "./bedrock/eventstream";

export function testTarget(opts: {
  wireFormat: WireFormat;
  providerId?: ProviderInfo["id"];
  baseUrl?: string;
  externalId?: string;
  quirks?: ProviderInfo["quirks"];
  settings?: Record<string, string | undefined>;
  mapping?: Partial<ProviderMapping>;
  apiKey?: string;
}): UpstreamTarget {
  const providerId = opts.providerId ?? "openai";
  const provider: ProviderInfo = {
    id: providerId,
    name: providerId,
    wireFormat: opts.wireFormat,
    baseUrl: opts.baseUrl ?? `https://api.example.test/${providerId}`,
    trainsOnApiData: false,
  };
  if (opts.quirks) provider.quirks = opts.quirks;
  const mapping: ProviderMapping = {
    providerId,
    externalId: opts.externalId ?? "test-model",
    pricing: { prompt: "0.000001", completion: "0.000002" },
    contextLength: 128000,
    maxOutput: 4096,
    streaming: true,
    vision: true,
    tools: true,
    parallelToolCalls: true,
    reasoning: true,
    jsonOutput: true,
    structuredOutputs: true,
    ...opts.mapping,
  };
  return {
    provider,
    mapping,
    model: null,
    baseUrl: opts.baseUrl ?? provider.baseUrl,
    apiKey: opts.apiKey ?? "sk-test",
    settings: opts.settings ?? {},
  };
}

/** Collects every event of an async iterable. */
export async function collectEvents<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function bytesStream(parts: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(typeof p === "string" ? enc.encode(p) : p);
      c.close();
    },
  });
}

/** One AWS eventstream message with string headers (Bedrock ConverseStream framing). */
export function encodeEventStreamMessage(headers: Record<string, string>, payload: string): Uint8Array {
  const enc = new TextEncoder();
  const hs = Object.entries(headers).flatMap(([k, v]) => {
    const kb = enc.encode(k);
    const vb = enc.encode(v);
    return [kb.length, ...kb, 7, vb.length >> 8, vb.length & 0xff, ...vb];
  });
  const p = enc.encode(payload);
  const total = 12 + hs.length + p.length + 4;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, hs.length);
  view.setUint32(8, crc32(out.subarray(0, 8)));
  out.set(hs, 12);
  out.set(p, 12 + hs.length);
  view.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
}

/** The Request an upstream call describes, for tests that read it as one (or send it with `fetch`). */
export const upstreamRequest = ({ url, init }: UpstreamCall): Request => new Request(url, init);

/** An adapter's upstream request for `req`, as a Request. */
export const builtRequest = async (adapter: ProviderAdapter, req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): Promise<Request> =>
  upstreamRequest(await adapter.buildCall(req, target, opts));

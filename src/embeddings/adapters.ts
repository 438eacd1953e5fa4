/**
 * Embedding requests per wire format (the chat adapters' counterpart for `POST /v1/embeddings`).
 * Pure: build the upstream request, parse its answer into vectors + prompt tokens. Formats without
 * an entry have no embedding API the gateway speaks (the catalogue maps no embedding model there).
 *
 * - openai (and every OpenAI-compatible provider): `POST <base>/embeddings`, always asked for
 *   floats (the gateway encodes base64 itself, for every format alike); usage from the answer.
 * - google (AI Studio): `POST <base>/v1beta/models/<m>:batchEmbedContents`, one request per input,
 *   `outputDimensionality` for `dimensions`. Gemini reports no usage: tokens are estimated.
 */
import type { WireFormat } from "../catalog/types";
import { estimateTextTokens } from "../billing/estimate";
import { MalformedUpstreamError } from "../providers/errors";
import type { UpstreamCall, UpstreamErrorInfo, UpstreamTarget } from "../providers/types";
import { upstreamPost } from "../providers/types";
import { parseErrorBody } from "../providers/error-body";

export interface EmbeddingInput {
  /** Texts, or token arrays (OpenAI-compatible upstreams only). */
  input: string[] | number[][];
  dimensions?: number;
  user?: string;
}

export interface EmbeddingResult {
  vectors: number[][];
  promptTokens: number;
}

export interface EmbeddingAdapter {
  /** The upstream request as `fetch`'s arguments (not a Request: `fetch(request)` would copy it). */
  buildCall(req: EmbeddingInput, target: UpstreamTarget, signal: AbortSignal): UpstreamCall;
  parseResponse(body: unknown, req: EmbeddingInput): EmbeddingResult;
  parseError(status: number, text: string): UpstreamErrorInfo;
}

const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");
const textTokens = (req: EmbeddingInput): number =>
  req.input.reduce((n, x) => n + (typeof x === "string" ? estimateTextTokens(x) : x.length), 0);

const openai: EmbeddingAdapter = {
  buildCall(req, target, signal) {
    const body: Record<string, unknown> = { model: target.mapping.externalId, input: req.input, encoding_format: "float" };
    if (req.dimensions !== undefined) body.dimensions = req.dimensions;
    if (req.user !== undefined) body.user = req.user;
    return upstreamPost(`${target.baseUrl}/embeddings`, { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" }, JSON.stringify(body), signal);
  },
  parseResponse(body, req) {
    const b = body as { data?: Array<{ index?: number; embedding?: unknown }>; usage?: { prompt_tokens?: number } } | null;
    if (!b || !Array.isArray(b.data)) throw new MalformedUpstreamError("the embeddings answer has no data");
    const vectors: number[][] = [];
    for (const [i, d] of b.data.entries()) {
      if (!isVector(d.embedding)) throw new MalformedUpstreamError("an embedding is not a list of numbers");
      vectors[typeof d.index === "number" ? d.index : i] = d.embedding;
    }
    if (vectors.length !== req.input.length) throw new MalformedUpstreamError("the embeddings answer has the wrong number of vectors");
    const reported = b.usage?.prompt_tokens;
    return { vectors, promptTokens: typeof reported === "number" && reported >= 0 ? reported : textTokens(req) };
  },
  parseError: parseErrorBody,
};

const google: EmbeddingAdapter = {
  buildCall(req, target, signal) {
    const model = `models/${target.mapping.externalId}`;
    const requests = req.input.map((x) => ({
      model,
      content: { parts: [{ text: typeof x === "string" ? x : x.join(" ") }] },
      ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
    }));
    const url = `${target.baseUrl}/v1beta/${model.split("/").map(encodeURIComponent).join("/")}:batchEmbedContents`;
    return upstreamPost(url, { "x-goog-api-key": target.apiKey, "content-type": "application/json" }, JSON.stringify({ requests }), signal);
  },
  parseResponse(body, req) {
    const b = body as { embeddings?: Array<{ values?: unknown }> } | null;
    if (!b || !Array.isArray(b.embeddings) || b.embeddings.length !== req.input.length) throw new MalformedUpstreamError("the batchEmbedContents answer has the wrong number of embeddings");
    const vectors = b.embeddings.map((e) => {
      if (!isVector(e.values)) throw new MalformedUpstreamError("an embedding is not a list of numbers");
      return e.values;
    });
    return { vectors, promptTokens: textTokens(req) };
  },
  parseError: parseErrorBody,
};

const ADAPTERS: Partial<Record<WireFormat, EmbeddingAdapter>> = { openai, google };

export const embeddingAdapterFor = (format: WireFormat): EmbeddingAdapter | undefined => ADAPTERS[format];

/** A vector as OpenAI's `encoding_format: "base64"`: little-endian float32, base64. */
export function toBase64Float32(v: readonly number[]): string {
  const buf = new ArrayBuffer(v.length * 4);
  const view = new DataView(buf);
  v.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let bin = "";
  const bytes = new Uint8Array(buf);
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

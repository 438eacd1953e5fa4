/**
 * OpenTelemetry export per organization (contract section 8): every request record becomes one
 * span, sent as OTLP/HTTP JSON to `<otlpEndpoint>/v1/traces`. The LOGS consumer hands the records
 * it has just applied (each once) to `exportSpans`, which packs the spans of each exporting
 * organization into DELIVERIES messages; the delivery consumer POSTs them, retrying with backoff
 * (src/integrations/deliveries.ts). A collector that is down delays spans, never records or
 * requests. Span and trace ids derive from the record id, so a re-sent span is recognisably the same.
 *
 * Attributes follow the GenAI semantic conventions (gen_ai.operation.name, gen_ai.provider.name,
 * gen_ai.request.model, gen_ai.response.model, gen_ai.usage.input_tokens/output_tokens), plus
 * switchboard.request_id (the x-request-id) and switchboard.cost_usd.
 */
import { eq } from "drizzle-orm";
import type { Env } from "../env";
import { isProduction } from "../env";
import { getDb } from "../db/client";
import { otlpExports } from "../db/schema";
import { badRequest } from "../errors/api-error";
import { decryptSecret, encryptSecret } from "../lib/crypto";
import { checkUpstreamUrl } from "../lib/ssrf";
import { requireHashSecret } from "../lib/crypto";
import type { LogRecord } from "../usage/log-record";
import { REFUND_KIND } from "../usage/request-log";
import { postJson } from "./post";
import { readBodies, type BodyReads, type StoredBodies } from "../usage/bodies";
import { traceOf } from "../usage/conversation";
import { OPERATION_DETAILS_EVENT, operationDetails } from "./otlp-bodies";

export interface OtlpMessage {
  kind: "otlp";
  organizationId: string;
  /** The OTLP JSON body (ExportTraceServiceRequest). */
  payload: string;
  spans: number;
}

/** Bytes of spans per queue message (a message holds at most 128 KB). */
const MESSAGE_BYTES = 100_000;
/** Bytes per sendBatch (Queues take at most 256 KB per batch). */
const BATCH_BYTES = 200_000;

/**
 * The records are applied before their spans are queued, so a redelivered batch would not export
 * them again: a transient failure of the D1 read or the queue send is retried here, a few times.
 */
async function withRetries<T>(f: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100 * 4 ** (i - 1)));
    }
  }
}

/** Our provider ids as the conventions' `gen_ai.provider.name` values, where they differ. */
const PROVIDER_NAMES: Record<string, string> = {
  "google-ai-studio": "gcp.gemini",
  "google-vertex": "gcp.vertex_ai",
  "aws-bedrock": "aws.bedrock",
  azure: "azure.ai.openai",
  mistral: "mistral_ai",
  xai: "x_ai",
};
const OPERATIONS: Record<string, string> = { chat: "chat", embedding: "embeddings", image: "generate_content", video: "generate_content", moderation: "moderation" };

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: AnyValue[] } };
const attr = (key: string, value: string | number | boolean | null | undefined, double = false): { key: string; value: AnyValue } | null => {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return { key, value: { stringValue: value } };
  if (typeof value === "boolean") return { key, value: { boolValue: value } };
  return double ? { key, value: { doubleValue: value } } : { key, value: { intValue: String(Math.trunc(value)) } };
};

/** A string[] attribute (the conventions' `gen_ai.response.finish_reasons` is one, even for a single choice). */
const listAttr = (key: string, values: readonly string[]): { key: string; value: AnyValue } | null =>
  values.length ? { key, value: { arrayValue: { values: values.map((v) => ({ stringValue: v })) } } } : null;

async function idHex(seed: string, bytes: number): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)));
  return [...d.slice(0, bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** One record as an OTLP span (JSON encoding: hex ids, nanosecond times as strings). */
/** `bodies`: the request's kept prompt and answer (projects with `logBodies`), sent as a span event. */
export async function spanOf(r: LogRecord, bodies: StoredBodies | null = null): Promise<Record<string, unknown>> {
  const provider = r.usedProvider ?? r.requestedProvider ?? null;
  const operation = OPERATIONS[r.kind] ?? r.kind;
  const model = r.usedModel ?? r.requestedModel;
  const ns = (ms: number) => `${Math.trunc(ms)}000000`;
  const attributes = [
    attr("gen_ai.operation.name", operation),
    attr("gen_ai.provider.name", provider === null ? null : (PROVIDER_NAMES[provider] ?? provider)),
    attr("gen_ai.request.model", r.requestedModel),
    attr("gen_ai.response.model", r.usedModel),
    attr("gen_ai.usage.input_tokens", r.promptTokens),
    attr("gen_ai.usage.output_tokens", r.completionTokens),
    listAttr("gen_ai.response.finish_reasons", r.finishReason === null ? [] : [r.finishReason]),
    attr("switchboard.request_id", r.requestId),
    attr("switchboard.cost_usd", r.costPico / 1e12, true),
    attr("switchboard.provider", provider),
    attr("switchboard.project_id", r.projectId),
    attr("switchboard.api_key_id", r.apiKeyId),
    attr("switchboard.source_app", r.sourceApp),
    attr("switchboard.cached", r.cached),
    attr("switchboard.streamed", r.streamed),
    attr("http.response.status_code", r.statusCode),
    attr("error.type", r.errorType),
    attr("switchboard.ttft_ms", r.ttftMs),
  ].filter((a) => a !== null);
  const details = bodies ? operationDetails(bodies) : null;
  const events = details
    ? [{ timeUnixNano: ns(r.createdAt + (r.latencyMs ?? 0)), name: OPERATION_DETAILS_EVENT, attributes: [...details.attributes.map((a) => attr(a.key, a.value)), attr("switchboard.body_truncated", details.truncated)] }]
    : undefined;
  return {
    traceId: await idHex(`trace:${r.id}`, 16),
    spanId: await idHex(`span:${r.id}`, 8),
    name: `${operation} ${model}`,
    kind: 3, // CLIENT: the gateway calls the model
    startTimeUnixNano: ns(r.createdAt),
    endTimeUnixNano: ns(r.createdAt + (r.latencyMs ?? 0)),
    attributes,
    ...(events ? { events } : {}),
    status: r.statusCode >= 400 ? { code: 2, message: (r.errorMessage ?? r.errorType ?? `HTTP ${r.statusCode}`).slice(0, 300) } : { code: 1 },
  };
}

/** The ExportTraceServiceRequest around spans already serialized: each span's JSON text is made once, never parsed again. */
const tracesPayload = (spanTexts: readonly string[]): string =>
  `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"switchboard"}}]},"scopeSpans":[{"scope":{"name":"switchboard.gateway"},"spans":[${spanTexts.join(",")}]}]}]}`;

/**
 * Called by the LOGS consumer with the records it applied: queues their spans for the
 * organizations that export. Never throws (the records are stored whatever happens here).
 */
export async function exportSpans(env: Env, records: readonly LogRecord[]): Promise<void> {
  try {
    const orgs = [...new Set(records.map((r) => r.organizationId))];
    const res = await withRetries(() => env.DB.prepare("SELECT organization_id FROM otlp_exports WHERE organization_id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(orgs)).all<{ organization_id: string }>());
    if (res.results.length === 0) return;
    const exporting = new Set(res.results.map((r) => r.organization_id));
    // The bodies of one group sit in one object: read once for all its requests.
    const reads: BodyReads = new Map();
    const messages: Array<{ body: OtlpMessage }> = [];
    for (const org of exporting) {
      let spans: string[] = [];
      let bytes = 0;
      const flush = () => {
        if (spans.length) messages.push({ body: { kind: "otlp", organizationId: org, payload: tracesPayload(spans), spans: spans.length } });
        spans = [];
        bytes = 0;
      };
      for (const r of records) {
        // A refund is a correction of another request's cost, not a request.
        if (r.organizationId !== org || r.kind === REFUND_KIND) continue;
        // Bodies only for a project that kept them (the record says so); stored before the records
        // of the same batch (src/usage/log-consumer.ts), so normally there by now.
        const bodies = traceOf(r).bodies ? await readBodies(env, r, reads).catch(() => null) : null;
        const s = JSON.stringify(await spanOf(r, bodies));
        if (bytes + s.length > MESSAGE_BYTES) flush();
        spans.push(s);
        bytes += s.length;
      }
      flush();
    }
    // A sendBatch holds at most 100 messages and 256 KB in all.
    let batch: typeof messages = [];
    let size = 0;
    const send = async () => {
      const sending = batch;
      if (sending.length) await withRetries(() => env.DELIVERIES.sendBatch(sending));
      batch = [];
      size = 0;
    };
    for (const m of messages) {
      const bytes = m.body.payload.length + 200;
      if (batch.length === 100 || (batch.length > 0 && size + bytes > BATCH_BYTES)) await send();
      batch.push(m);
      size += bytes;
    }
    await send();
  } catch (err) {
    console.error("spans not queued for export", err instanceof Error ? err.message : String(err));
  }
}

/** One span message as the delivery consumer hands it over: its attempt count, and whether it is the last. */
export interface SpanDelivery {
  message: OtlpMessage;
  attempts: number;
  last: boolean;
}

/**
 * The consumer's step for one organization's span messages of a batch: the export's settings read
 * once, one POST per message (at the same time), the outcome recorded once (a failure when any
 * POST failed, the last success's time when any succeeded): two D1 statements per organization
 * and batch, not per message. Returns, per message, whether it was delivered.
 */
export async function deliverSpans(env: Env, organizationId: string, items: readonly SpanDelivery[]): Promise<boolean[]> {
  const db = getDb(env.DB);
  const cfg = await db.select().from(otlpExports).where(eq(otlpExports.organizationId, organizationId)).get();
  if (!cfg) return items.map(() => true); // turned off since: nothing to send
  const headers = cfg.headersSealed ? (JSON.parse(await decryptSecret(requireHashSecret(env), cfg.headersSealed)) as Record<string, string>) : {};
  const outs = await Promise.all(items.map((i) => postJson(`${cfg.endpoint}/v1/traces`, i.message.payload, headers)));
  const now = Date.now();
  const failed = outs.findIndex((o) => !o.ok);
  const out = failed >= 0 ? outs[failed]! : outs[outs.length - 1]!;
  const item = items[failed >= 0 ? failed : items.length - 1]!;
  const error = out.ok ? null : `${out.error ?? "failed"}${item.last ? ` (given up after ${item.attempts} attempts)` : ` (attempt ${item.attempts}, retried)`}`;
  try {
    await db
      .update(otlpExports)
      .set({ lastAttemptAt: now, lastStatus: out.status, lastError: error, ...(outs.some((o) => o.ok) ? { lastSuccessAt: now } : {}) })
      .where(eq(otlpExports.organizationId, organizationId));
  } catch (err) {
    // The POSTs happened: a status that cannot be written must not send accepted spans again.
    console.error("span delivery status not recorded", err instanceof Error ? err.message : String(err));
  }
  return outs.map((o) => o.ok);
}

// ---------- settings ----------

export interface ObservabilityPatch {
  otlpEndpoint: string;
  otlpHeaders?: Record<string, string>;
}

/** Sets (or with null removes) the organization's OTLP export. The endpoint passes the outbound-address guard. */
export async function setOtlpExport(env: Env, organizationId: string, patch: ObservabilityPatch | null): Promise<void> {
  const db = getDb(env.DB);
  if (patch === null) {
    await db.delete(otlpExports).where(eq(otlpExports.organizationId, organizationId));
    return;
  }
  const check = checkUpstreamUrl(patch.otlpEndpoint, { production: isProduction(env) });
  if (!check.ok) throw badRequest(`Invalid value for 'observability.otlpEndpoint': ${check.reason}`, "observability.otlpEndpoint");
  const endpoint = patch.otlpEndpoint.replace(/\/+$/, "").replace(/\/v1\/traces$/, "");
  const names = Object.keys(patch.otlpHeaders ?? {});
  const headersSealed = names.length ? await encryptSecret(requireHashSecret(env), JSON.stringify(patch.otlpHeaders)) : null;
  const values = { endpoint, headersSealed, headerNames: names, lastAttemptAt: null, lastSuccessAt: null, lastStatus: null, lastError: null, updatedAt: Date.now() };
  await db.insert(otlpExports).values({ organizationId, ...values }).onConflictDoUpdate({ target: otlpExports.organizationId, set: values });
}

/** The export as shown (header names only, never their values) with the last delivery's outcome; null when off. */
export async function otlpExportView(env: Env, organizationId: string) {
  const row = await getDb(env.DB).select().from(otlpExports).where(eq(otlpExports.organizationId, organizationId)).get();
  if (!row) return null;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return {
    otlpEndpoint: row.endpoint,
    otlpHeaderNames: row.headerNames,
    lastDelivery: row.lastAttemptAt === null ? null : { at: iso(row.lastAttemptAt), ok: row.lastError === null, status: row.lastStatus, error: row.lastError },
    lastSuccessAt: iso(row.lastSuccessAt),
  };
}

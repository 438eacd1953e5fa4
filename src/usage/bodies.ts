/**
 * Request and response bodies, kept for projects with `logBodies` on (docs/analytics.md).
 *
 * After the answer (the request path only stringifies them, in a task scheduled after the response
 * is handed back), a body message rides the LOGS queue beside the request's record; its consumer
 * (src/usage/log-consumer.ts) removes secrets, masks personal data when the organization asks
 * (src/usage/redact.ts) and writes one gzip JSON object per request to the LOGS_BUCKET:
 * `bodies/{org}/{yyyy}/{mm}/{dd}/{hh}/{logId}.json.gz` (the hour of the request's start, as its
 * record). Never in D1. Retention deletes them with the records (src/usage/retention.ts).
 *
 * Each side is capped at BODY_CAP_BYTES of JSON text: a larger one is kept as the first
 * BODY_CAP_BYTES of its text, marked truncated (shorter still when both sides, escaped, would not
 * fit one queue message). A body message the queue refuses is dropped (the
 * record itself is never at stake: it travels separately).
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { CompletionAccumulator } from "../providers/accumulate";
import type { Choice, StreamEvent } from "../providers/types";
import { scrubValue } from "./redact";

/** Bytes of JSON text kept per side (request, response) of one request. */
export const BODY_CAP_BYTES = 32 * 1024;
const DAY_MS = 86_400_000;

/** One request's bodies as they ride the queue. */
export interface BodyEntry {
  logId: string;
  requestId: string;
  organizationId: string;
  projectId: string;
  createdAt: number;
  /** The organization's `compliance.redactBodies` at request time. */
  redact: boolean;
  request: CappedJson;
  response: CappedJson;
}

/** A body as JSON text, or its first BODY_CAP_BYTES when longer. */
export interface CappedJson {
  text: string;
  truncated: boolean;
}

/** What is stored and returned: the bodies (parsed unless truncated: then the kept text). */
export interface StoredBodies {
  requestBody: unknown;
  responseBody: unknown;
  truncated?: { request: boolean; response: boolean };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function capJson(value: unknown): CappedJson {
  const text = JSON.stringify(value ?? null);
  const bytes = encoder.encode(text);
  if (bytes.length <= BODY_CAP_BYTES) return { text, truncated: false };
  // Cut on a character boundary (the decoder drops a split trailing sequence).
  return { text: decoder.decode(bytes.slice(0, BODY_CAP_BYTES)).replace(/\uFFFD$/, ""), truncated: true };
}

/** The answer of a stream, assembled into the shape of a JSON completion (text, tool calls, reasoning). */
export function streamAnswer(events: readonly StreamEvent[]): { choices: Choice[] } {
  const acc = new CompletionAccumulator();
  for (const e of events) acc.push(e);
  return { choices: acc.result().choices };
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `bodies/{org}/{yyyy}/{mm}/{dd}/`: one day of an organization's bodies. */
export function bodyDayPrefix(orgId: string, t: number): string {
  const d = new Date(t);
  return `bodies/${orgId}/${pad(d.getUTCFullYear(), 4)}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/`;
}

export const bodyKey = (orgId: string, logId: string, createdAt: number): string => `${bodyDayPrefix(orgId, createdAt)}${pad(new Date(createdAt).getUTCHours())}/${logId}.json.gz`;

export interface BodyCapture {
  auth: KeyContext;
  logId: string;
  requestId: string;
  createdAt: number;
  request: unknown;
  response: unknown;
}

/**
 * Queues a request's bodies when its project keeps them; a no-op otherwise. The work (stringify,
 * send) is scheduled after the current task, so the response is handed back first.
 */
export function queueBodies(env: Env, waitUntil: (p: Promise<unknown>) => void, c: BodyCapture): void {
  if (!c.auth.project.logBodies) return;
  waitUntil(
    new Promise<void>((resolve) => setTimeout(resolve, 0)).then(async () => {
      const entry: BodyEntry = {
        logId: c.logId,
        requestId: c.requestId,
        organizationId: c.auth.organization.id,
        projectId: c.auth.project.id,
        createdAt: c.createdAt,
        redact: c.auth.organization.compliance.redactBodies === true,
        request: capJson(c.request),
        response: capJson(c.response),
      };
      fitMessage(entry);
      try {
        await env.LOGS.send({ bodies: [entry] });
      } catch (err) {
        console.error("request bodies not queued; dropped", err instanceof Error ? err.message : String(err));
      }
    }),
  );
}

/** Queue messages hold at most 128 KB; escaping (quotes, newlines) can nearly double a capped side. */
const MESSAGE_BYTES = 120_000;

/** Halves the longer side until the message fits (both sides stay marked truncated when cut). */
function fitMessage(entry: BodyEntry): void {
  while (encoder.encode(JSON.stringify({ bodies: [entry] })).length > MESSAGE_BYTES) {
    const side = entry.request.text.length >= entry.response.text.length ? entry.request : entry.response;
    side.text = side.text.slice(0, Math.floor(side.text.length / 2));
    side.truncated = true;
  }
}

/** The bodies of a queue message (`{ bodies: [...] }`), or null when it is not one. */
export function bodyEntriesOf(body: unknown): BodyEntry[] | null {
  if (body === null || typeof body !== "object" || !Array.isArray((body as { bodies?: unknown }).bodies)) return null;
  return ((body as { bodies: unknown[] }).bodies).filter((e): e is BodyEntry => {
    const b = e as Partial<BodyEntry> | null;
    return !!b && typeof b.logId === "string" && typeof b.organizationId === "string" && Number.isSafeInteger(b.createdAt) && typeof b.request?.text === "string" && typeof b.response?.text === "string";
  });
}

/** A capped body as stored: secrets removed (and personal data masked) in the parsed value, or in the kept text. */
function cleaned(c: CappedJson, redact: boolean): unknown {
  if (c.truncated) return scrubValue(c.text, redact);
  try {
    return scrubValue(JSON.parse(c.text) as unknown, redact);
  } catch {
    return scrubValue(c.text, redact);
  }
}

/** The consumer's step: one object per request (rewriting the same key on a redelivery). Throws when R2 fails. */
export async function storeBodies(env: Env, entries: readonly BodyEntry[]): Promise<void> {
  await Promise.all(
    entries.map(async (e) => {
      const stored: StoredBodies = { requestBody: cleaned(e.request, e.redact), responseBody: cleaned(e.response, e.redact) };
      if (e.request.truncated || e.response.truncated) stored.truncated = { request: e.request.truncated, response: e.response.truncated };
      const gz = await new Response(new Blob([JSON.stringify(stored)]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
      await env.LOGS_BUCKET.put(bodyKey(e.organizationId, e.logId, e.createdAt), gz, { httpMetadata: { contentType: "application/json", contentEncoding: "gzip" }, customMetadata: { requestId: e.requestId, projectId: e.projectId } });
    }),
  );
}

/** A request's stored bodies, or null when none were kept. */
export async function readBodies(env: Env, r: { organizationId: string; id: string; createdAt: number }): Promise<StoredBodies | null> {
  const obj = await env.LOGS_BUCKET.get(bodyKey(r.organizationId, r.id, r.createdAt));
  if (!obj) return null;
  const text = await new Response(obj.body.pipeThrough(new DecompressionStream("gzip"))).text();
  return JSON.parse(text) as StoredBodies;
}

/** Every organization with stored bodies. */
async function bodyOrganizations(bucket: R2Bucket): Promise<string[]> {
  const orgs: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: "bodies/", delimiter: "/", cursor });
    for (const p of page.delimitedPrefixes) orgs.push(p.slice("bodies/".length, -1));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return orgs;
}

/** Retention: the bodies of days older than the records' retention (`retentionDays`), looking back `lookbackDays`. */
export async function deleteExpiredBodies(env: Env, now: number, retentionDays: number, lookbackDays: number): Promise<number> {
  const bucket = env.LOGS_BUCKET;
  const orgs = await bodyOrganizations(bucket);
  let deleted = 0;
  const oldest = now - (retentionDays + lookbackDays) * DAY_MS;
  for (let day = now - (retentionDays + 1) * DAY_MS; day >= oldest; day -= DAY_MS) {
    for (const org of orgs) {
      let c: string | undefined;
      do {
        const page = await bucket.list({ prefix: bodyDayPrefix(org, day), cursor: c });
        if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
        deleted += page.objects.length;
        c = page.truncated ? page.cursor : undefined;
      } while (c);
    }
  }
  return deleted;
}

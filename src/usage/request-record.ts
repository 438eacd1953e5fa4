/**
 * One request record by its `x-request-id`, scoped to an organization, with its kept bodies
 * (`GET /v1/master/logs/{requestId}`). The D1 window answers by its (organization, request id)
 * index; beyond the window the caller names the request's time (`at`), and that hour's objects in
 * R2 are read.
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";
import { hourPrefix, publicRecord, readNdjsonGz, recordFromDbRow, type LogRecord } from "./log-record";
import { REFUND_KIND } from "./request-log";
import { readBodiesStatus, type BodiesStatus } from "./bodies";

/** `bodiesStatus` is present when the request's project kept its bodies (src/usage/bodies.ts `BodiesStatus`). */
export type RecordWithBodies = LogRecord & { requestBody?: unknown; responseBody?: unknown; bodiesTruncated?: { request: boolean; response: boolean }; bodiesStatus?: BodiesStatus };

async function fromWindow(env: Env, organizationId: string, requestId: string): Promise<LogRecord | null> {
  const row = await env.DB.prepare("SELECT * FROM request_logs WHERE organization_id = ?1 AND request_id = ?2 AND kind <> ?3 ORDER BY created_at LIMIT 1")
    .bind(organizationId, requestId, REFUND_KIND)
    .first<Record<string, unknown>>();
  return row ? recordFromDbRow(row) : null;
}

async function fromArchive(env: Env, organizationId: string, requestId: string, at: number): Promise<LogRecord | null> {
  // The hour named and the one before (a request that started just before the hour it was asked about).
  for (const hour of [at - (at % HOUR_MS), at - (at % HOUR_MS) - HOUR_MS]) {
    let cursor: string | undefined;
    do {
      const page = await env.LOGS_BUCKET.list({ prefix: hourPrefix(organizationId, hour), cursor });
      for (const o of page.objects) {
        if (!o.key.endsWith(".ndjson.gz")) continue;
        const obj = await env.LOGS_BUCKET.get(o.key);
        const found = obj ? (await readNdjsonGz(obj.body)).find((r) => r.requestId === requestId && r.kind !== REFUND_KIND) : undefined;
        if (found && found.organizationId === organizationId) return found;
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  return null;
}

/** The record and, when its project kept them, its bodies; null when the organization has no such request. */
export async function findRequestRecord(env: Env, organizationId: string, requestId: string, at: number | null): Promise<RecordWithBodies | null> {
  const record = (await fromWindow(env, organizationId, requestId)) ?? (at === null ? null : await fromArchive(env, organizationId, requestId, at));
  if (!record) return null;
  const { bodies, status } = await readBodiesStatus(env, record);
  const shown = publicRecord(record);
  if (!bodies) return status ? { ...shown, bodiesStatus: status } : shown;
  return { ...shown, requestBody: bodies.requestBody, responseBody: bodies.responseBody, ...(bodies.truncated ? { bodiesTruncated: bodies.truncated } : {}), bodiesStatus: status ?? "stored" };
}

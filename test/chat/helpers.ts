/** Helpers for the chat completion integration tests. */
import OpenAI from "openai";
import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { call, json } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { projects, requestLogs } from "../../src/db/schema";
import { bumpKeyVersions } from "../../src/keys/sync";

export function chat(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return call("/v1/chat/completions", {
    method: "POST",
    key,
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

export const user = (content: string) => [{ role: "user", content }];

export type LogRow = typeof requestLogs.$inferSelect;

/** Polls D1 until the request's log row exists (written in waitUntil). */
export async function waitForLog(requestId: string, timeoutMs = 5000): Promise<LogRow> {
  const db = getDb(env.DB);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.select().from(requestLogs).where(eq(requestLogs.requestId, requestId)).limit(1);
    if (rows[0]) return rows[0];
    if (Date.now() > deadline) throw new Error(`no request log for ${requestId}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Updates a project in D1 and bumps its keys so every isolate reloads the context. */
export async function setProject(projectId: string, patch: Partial<typeof projects.$inferInsert>): Promise<void> {
  await getDb(env.DB).update(projects).set(patch).where(eq(projects.id, projectId));
  await bumpKeyVersions(env, { projectId });
}

/**
 * Moves `org`'s project onto its own provider keys with one key of `provider` per region: with a
 * base URL of its own when given (that tenant's upstream, kept out of the shared metrics), else
 * the provider's public endpoint (the fake upstream, which takes `byok-` tokens as a tenant's own).
 */
export async function useRegionalKeys(org: { projectId: string; masterKey: string }, provider: string, regions: ReadonlyArray<string | { region: string; baseUrl: string }>): Promise<void> {
  await setProject(org.projectId, { mode: "api-keys" });
  for (const r of regions) {
    const { region, baseUrl } = typeof r === "string" ? { region: r, baseUrl: undefined } : r;
    const res = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider, token: `byok-${region}`, region, ...(baseUrl ? { baseUrl } : {}) }) });
    if (res.status !== 201) throw new Error(`${provider} key for ${region}: HTTP ${res.status} ${await res.text()}`);
  }
}

/** Parses an SSE body into its `data:` payloads (JSON objects, or the string "[DONE]"), plus comments. */
export async function readSse(res: Response): Promise<{ events: Array<Record<string, unknown> | "[DONE]">; raw: string }> {
  const raw = await res.text();
  const events: Array<Record<string, unknown> | "[DONE]"> = [];
  for (const block of raw.split("\n\n")) {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6))
      .join("\n");
    if (!data) continue;
    events.push(data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as Record<string, unknown>));
  }
  return { events, raw };
}

/** Forgets all live provider metrics (the global and per-continent DOs and this isolate's views). */
export async function resetMetrics(): Promise<void> {
  const { runInDurableObject } = await import("cloudflare:test");
  const { metricsStub } = await import("../../src/durable-objects/provider-metrics");
  const { resetLiveMetrics, metricsWritesSettled } = await import("../../src/routing/live-metrics");
  await metricsWritesSettled(env);
  const { CONTINENTS } = await import("../../src/routing/regions");
  for (const scope of ["global", ...CONTINENTS] as const) {
    await runInDurableObject(metricsStub(env, scope), async (instance, state) => {
      await state.storage.deleteAll();
      (instance as unknown as { series: unknown }).series = null;
    });
  }
  resetLiveMetrics();
}

/** The official `openai` SDK pointed at the gateway in this workerd (no network, no retries). */
export const sdkClient = (apiKey: string): OpenAI =>
  new OpenAI({ baseURL: "http://gw.test/v1", apiKey, maxRetries: 0, fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)) });

/** The requests the fake upstream recorded under `tag`, oldest first (test/helpers/recorded.ts). */
export { recorded as recordedBodies } from "../helpers/recorded";

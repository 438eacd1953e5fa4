/**
 * Request records for generation requests (images, videos), built with the shared row mapper
 * (src/usage/request-log.ts) plus image/video token counts, sent to the LOGS queue like every
 * record. A video job's row is also written to D1 at once (the job's state, which the content
 * proxy reads and updates; it never ages out of the window): that insert rejects on failure, so a
 * video job is never reported created when its row is lost.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { getDb } from "../db/client";
import { requestLogs } from "../db/schema";
import { logRowJson, toLogRow, type RequestLogInput } from "../usage/request-log";
import { sendLogRow } from "../usage/log-queue";

export type GenerationLog = Omit<RequestLogInput, "usage" | "auth"> & { promptTokens?: number; completionTokens?: number };

export async function writeGenerationLog(env: Env, auth: KeyContext, log: GenerationLog): Promise<void> {
  const { promptTokens = 0, completionTokens = 0, ...rest } = log;
  const row = toLogRow({ ...rest, auth, usage: null });
  row.promptTokens = promptTokens;
  row.completionTokens = completionTokens;
  row.totalTokens = promptTokens + completionTokens;
  if (row.kind === "video") await getDb(env.DB).insert(requestLogs).values(row);
  await sendLogRow(env, { row: logRowJson(row), logId: row.id, keyId: auth.key.id, organizationId: auth.organization.id });
}

/** Logs and settlement must never fail the response; failures are reported without secrets. */
export function safely(what: string, p: Promise<unknown>): Promise<void> {
  return p.then(
    () => undefined,
    (err: unknown) => console.error(`${what} failed`, err instanceof Error ? err.message : String(err)),
  );
}

/**
 * Request-log rows for generation requests (images, videos), built with the shared row mapper
 * (src/usage/request-log.ts) plus image/video token counts. Unlike `writeRequestLog` this insert
 * rejects on failure: a video job must not be reported created when its row (the job) is lost.
 */
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { getDb } from "../db/client";
import { requestLogs } from "../db/schema";
import { toLogRow, type RequestLogInput } from "../usage/request-log";

export type GenerationLog = Omit<RequestLogInput, "usage" | "auth"> & { promptTokens?: number; completionTokens?: number };

export async function writeGenerationLog(env: Env, auth: KeyContext, log: GenerationLog): Promise<void> {
  const { promptTokens = 0, completionTokens = 0, ...rest } = log;
  const row = toLogRow({ ...rest, auth, usage: null });
  row.promptTokens = promptTokens;
  row.completionTokens = completionTokens;
  row.totalTokens = promptTokens + completionTokens;
  await getDb(env.DB).insert(requestLogs).values(row);
}

/** Logs and settlement must never fail the response; failures are reported without secrets. */
export function safely(what: string, p: Promise<unknown>): Promise<void> {
  return p.then(
    () => undefined,
    (err: unknown) => console.error(`${what} failed`, err instanceof Error ? err.message : String(err)),
  );
}

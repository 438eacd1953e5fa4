/**
 * What the fake upstream recorded of the requests that carried `[[tag:<id>]]`
 * (test/fake-upstream/README.md, Recording): the one way tests read exactly what the gateway sent.
 */
import { env } from "cloudflare:workers";

/** One recorded upstream request; `B` is the JSON body's shape where a test reads into it. */
export interface RecordedRequest<B = Record<string, unknown>> {
  /** The provider segment of the fake's path (`/openai/...` -> `openai`). */
  provider: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body: B;
  /** Epoch ms when the fake upstream received it. */
  receivedAt: number;
}

/** The requests the fake upstream recorded under `tag`, oldest first. */
export async function recorded<B = Record<string, unknown>>(tag: string): Promise<Array<RecordedRequest<B>>> {
  const res = await fetch(`${env.FAKE_UPSTREAM_URL}/__recorded/${encodeURIComponent(tag)}`);
  return (await res.json()) as Array<RecordedRequest<B>>;
}

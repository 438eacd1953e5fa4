/**
 * One outbound POST of a delivery (OpenTelemetry spans, webhook events), in a module of its own so
 * the senders and the queue consumer that calls them import it without a circle.
 */

/** A receiver slower than this counts as a failure (and is retried). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The outcome of one POST: ok, or why not (status when the receiver answered). */
export interface PostOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** One POST to a receiver: no redirects followed, bounded in time; never throws. */
export async function postJson(url: string, body: string, headers: Record<string, string>): Promise<PostOutcome> {
  try {
    const res = await fetch(url, { method: "POST", body, headers: { ...headers, "content-type": "application/json" }, redirect: "manual", signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    await res.body?.cancel();
    return res.status >= 200 && res.status < 300 ? { ok: true, status: res.status, error: null } : { ok: false, status: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, status: null, error: err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300) };
  }
}


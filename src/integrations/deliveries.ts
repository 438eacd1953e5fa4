/**
 * Outbound deliveries: OpenTelemetry spans (src/integrations/otlp.ts) and webhook events
 * (src/integrations/webhooks.ts) travel the DELIVERIES queue, never the request path. A failed
 * delivery is retried with exponential backoff (DELIVERY_RETRY_BASE_SECONDS, default 10 s,
 * doubling, at most an hour between attempts) up to MAX_DELIVERY_ATTEMPTS, then given up and
 * recorded as failed. Each message is one POST, so a receiver that fails gets exactly that POST
 * again, never a neighbour's.
 */
import type { Env } from "../env";
import { deliverSpans, type OtlpMessage } from "./otlp";
import { deliverWebhook, type WebhookMessage } from "./webhooks";

export type DeliveryMessage = OtlpMessage | WebhookMessage;

/** The queue's name in wrangler.jsonc (queue() tells the two consumers apart by it). */
export const DELIVERIES_QUEUE = "switchboard-deliveries";
export const MAX_DELIVERY_ATTEMPTS = 12;
const MAX_DELAY_SECONDS = 3600;
/** A receiver slower than this counts as a failure (and is retried). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Seconds before attempt `attempts + 1`. */
export function backoffSeconds(env: Env, attempts: number): number {
  const raw = Number(env.DELIVERY_RETRY_BASE_SECONDS);
  const base = Number.isFinite(raw) && raw >= 0 ? raw : 10;
  return Math.min(MAX_DELAY_SECONDS, Math.round(base * 2 ** Math.max(0, attempts - 1)));
}

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

const isDelivery = (b: unknown): b is DeliveryMessage => b !== null && typeof b === "object" && ((b as { kind?: unknown }).kind === "otlp" || (b as { kind?: unknown }).kind === "webhook");

/** The Worker's queue() handler for DELIVERIES: each message on its own; a failure retries only it. */
export async function consumeDeliveryBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (m) => {
      if (!isDelivery(m.body)) {
        console.error("deliveries queue: malformed message dropped", m.id);
        m.ack();
        return;
      }
      const last = m.attempts >= MAX_DELIVERY_ATTEMPTS;
      let ok: boolean;
      try {
        ok = m.body.kind === "otlp" ? await deliverSpans(env, m.body, m.attempts, last) : await deliverWebhook(env, m.body, m.attempts, last);
      } catch (err) {
        console.error("delivery failed", err instanceof Error ? err.message : String(err));
        ok = false;
      }
      if (ok || last) m.ack();
      else m.retry({ delaySeconds: backoffSeconds(env, m.attempts) });
    }),
  );
}

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

export { DELIVERY_TIMEOUT_MS, postJson, type PostOutcome } from "./post";

export type DeliveryMessage = OtlpMessage | WebhookMessage;

/** The queue's name in wrangler.jsonc (queue() tells the two consumers apart by it). */
export const DELIVERIES_QUEUE = "switchboard-deliveries";
export const MAX_DELIVERY_ATTEMPTS = 12;
const MAX_DELAY_SECONDS = 3600;

/** Seconds before attempt `attempts + 1`. */
export function backoffSeconds(env: Env, attempts: number): number {
  const raw = Number(env.DELIVERY_RETRY_BASE_SECONDS);
  const base = Number.isFinite(raw) && raw >= 0 ? raw : 10;
  return Math.min(MAX_DELAY_SECONDS, Math.round(base * 2 ** Math.max(0, attempts - 1)));
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

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
  const settle = (m: Message<unknown>, ok: boolean) => {
    if (ok || m.attempts >= MAX_DELIVERY_ATTEMPTS) m.ack();
    else m.retry({ delaySeconds: backoffSeconds(env, m.attempts) });
  };
  /** Span messages by organization: one settings read and one status write per organization (src/integrations/otlp.ts). */
  const spans = new Map<string, Array<{ m: Message<unknown>; body: OtlpMessage }>>();
  const webhooks: Array<{ m: Message<unknown>; body: WebhookMessage }> = [];
  for (const m of batch.messages) {
    if (!isDelivery(m.body)) {
      console.error("deliveries queue: malformed message dropped", m.id);
      m.ack();
    } else if (m.body.kind === "otlp") {
      const list = spans.get(m.body.organizationId) ?? [];
      list.push({ m, body: m.body });
      spans.set(m.body.organizationId, list);
    } else webhooks.push({ m, body: m.body });
  }
  await Promise.all([
    ...[...spans].map(async ([org, list]) => {
      let oks: boolean[];
      try {
        oks = await deliverSpans(env, org, list.map(({ m, body }) => ({ message: body, attempts: m.attempts, last: m.attempts >= MAX_DELIVERY_ATTEMPTS })));
      } catch (err) {
        console.error("delivery failed", err instanceof Error ? err.message : String(err));
        oks = list.map(() => false);
      }
      list.forEach(({ m }, i) => settle(m, oks[i] === true));
    }),
    ...webhooks.map(async ({ m, body }) => {
      let ok: boolean;
      try {
        ok = await deliverWebhook(env, body, m.attempts, m.attempts >= MAX_DELIVERY_ATTEMPTS);
      } catch (err) {
        console.error("delivery failed", err instanceof Error ? err.message : String(err));
        ok = false;
      }
      settle(m, ok);
    }),
  ]);
}

/** @jsxImportSource hono/jsx */
/**
 * The Organization page's integrations card (owners and admins): the OpenTelemetry export with its
 * last delivery, and the webhooks with their latest delivery. Changes go through the master API
 * (docs/integrations.md); header values and signing secrets are never shown here.
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import { otlpExportView } from "../../integrations/otlp";
import { listDeliveries, listWebhooks } from "../../integrations/webhooks";

export async function loadIntegrations(env: Env, organizationId: string) {
  const [otlp, hooks] = await Promise.all([otlpExportView(env, organizationId), listWebhooks(env, organizationId)]);
  const withLast = await Promise.all(hooks.map(async (h) => ({ ...h, last: (await listDeliveries(env, organizationId, h.id, 1))[0] ?? null })));
  return { otlp, webhooks: withLast };
}

export type IntegrationsView = Awaited<ReturnType<typeof loadIntegrations>>;

export const Integrations: FC<{ data: IntegrationsView }> = ({ data }) => (
  <section class="card" aria-labelledby="integrations-title">
    <h2 id="integrations-title">Integrations</h2>
    <h3>OpenTelemetry export</h3>
    {data.otlp ? (
      <p data-otlp-status={data.otlp.lastDelivery ? (data.otlp.lastDelivery.ok ? "ok" : "failing") : "none"}>
        <code>{data.otlp.otlpEndpoint}/v1/traces</code>
        {data.otlp.otlpHeaderNames.length ? <span class="muted small"> · headers: {data.otlp.otlpHeaderNames.join(", ")}</span> : null}
        <br />
        {data.otlp.lastDelivery
          ? `Last delivery ${data.otlp.lastDelivery.at}: ${data.otlp.lastDelivery.ok ? `ok (HTTP ${data.otlp.lastDelivery.status ?? "?"})` : `failed: ${data.otlp.lastDelivery.error ?? "unknown error"}`}`
          : "No delivery yet."}
      </p>
    ) : (
      <p class="empty">Off. Turn it on with PATCH /v1/master/organization {"{"}"observability": ...{"}"}.</p>
    )}
    <h3>Webhooks</h3>
    {data.webhooks.length ? (
      <ul>
        {data.webhooks.map((h) => (
          <li>
            <code>{h.url}</code> <span class="muted small">{h.events.join(", ")}</span>
            <br />
            <span class="small">{h.last ? `Last: ${h.last.type} ${h.last.status} after ${h.last.attempts} attempt(s)${h.last.responseCode ? `, HTTP ${h.last.responseCode}` : ""}` : "No delivery yet."}</span>
          </li>
        ))}
      </ul>
    ) : (
      <p class="empty">No webhooks. Create one with POST /v1/master/webhooks.</p>
    )}
  </section>
);

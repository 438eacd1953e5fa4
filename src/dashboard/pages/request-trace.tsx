/** @jsxImportSource hono/jsx */
/**
 * The request page as a trace: the request's phases on one time axis (admission, response cache
 * read, each upstream attempt with its time to first token and duration, why it failed over, hedge
 * losers and what they cost), cost and tokens per attempt, and the other requests of the same
 * conversation (src/usage/conversation.ts). Bars are SVG (the dashboard's CSP allows no inline style).
 */
import type { FC } from "hono/jsx";
import type { RoutingAttempt } from "../../db/schema";
import type { LogRecord } from "../../usage/log-record";
import { traceOf } from "../../usage/conversation";
import { formatUsd as picoUsd } from "../../billing/money";
import { compactNumber } from "../format";

const REASONS: Record<string, string> = {
  early_cancelled: "cancelled: started before admission answered, not taken",
  hedge_cancelled: "hedge lost: the other attempt answered first",
  client_aborted: "the client went away",
  timeout: "no first byte in time",
  network_error: "network error",
  malformed_response: "malformed answer",
  unsupported_input: "this provider cannot take the input",
};

/** Why an attempt did not answer, in words (`error_type` from src/routing/failover.ts or the provider's error). */
export function failoverReason(a: RoutingAttempt): string {
  if (a.succeeded) return "answered";
  const known = a.error_type ? REASONS[a.error_type] : undefined;
  if (known) return known;
  const status = a.status_code ? `HTTP ${a.status_code}` : "failed";
  return a.error_type ? `${a.error_type.replace(/_/g, " ")} (${status})` : status;
}

interface Span {
  label: string;
  detail: string;
  at: number;
  ms: number;
  /** Where the first token came, ms from the request's start (a drawn tick). */
  firstAt?: number;
  kind: "phase" | "ok" | "bad" | "lost";
  attempt?: { a: RoutingAttempt; n: number; ttft: number | null; tokens: string; cost: string };
}

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? "—" : `${Math.round(v)} ms`);
const usd = (pico: number): string => `$${picoUsd(BigInt(Math.round(pico)))}`;

/** The spans of a record, in time order; attempts without a recorded start follow one another. */
export function spansOf(r: LogRecord): Span[] {
  const t = traceOf(r);
  const out: Span[] = [];
  if (t.admission) out.push({ label: "Admission", detail: "key state, limits and credits", at: t.admission.at, ms: t.admission.ms, kind: "phase" });
  if (t.cacheRead) out.push({ label: "Cache read", detail: t.cacheRead.hit ? "hit: answered from the cache" : "miss", at: t.cacheRead.at, ms: t.cacheRead.ms, kind: "phase" });
  let cursor = t.admission ? t.admission.at + t.admission.ms : 0;
  r.routing.forEach((a, i) => {
    const at = a.start_ms ?? cursor;
    const winner = a.succeeded;
    // A winner's recorded latency is its time to the first byte (streams) or to the whole answer
    // (JSON); the request's own latency ends where the answer ended.
    const ttft = winner ? (r.ttftMs ?? a.latency_ms ?? null) : null;
    const duration = winner && r.latencyMs !== null ? Math.max(r.latencyMs - at, a.latency_ms ?? 0) : (a.latency_ms ?? 0);
    const lost = a.error_type === "hedge_cancelled";
    const cost = winner ? usd(r.costPico) : lost && a.hedge_cost ? `$${a.hedge_cost.toFixed(9).replace(/0+$/, "").replace(/\.$/, "")}` : "$0";
    const tokens = winner ? `${compactNumber(r.promptTokens)} in · ${compactNumber(r.completionTokens)} out` : "—";
    out.push({
      label: `Attempt ${i + 1}`,
      detail: `${a.provider}${a.region ? ` (${a.region})` : ""} · ${a.model}`,
      at,
      ms: duration,
      ...(ttft !== null ? { firstAt: at + Math.min(ttft, duration) } : {}),
      kind: winner ? "ok" : lost ? "lost" : "bad",
      attempt: { a, n: i + 1, ttft, tokens, cost },
    });
    cursor = at + duration;
  });
  return out.sort((x, y) => x.at - y.at);
}

const BAR_CLASS: Record<Span["kind"], string> = { phase: "bar2", ok: "bar-ok", bad: "bar-bad", lost: "bar" };

const Bar: FC<{ s: Span; total: number }> = ({ s, total }) => {
  const x = (v: number) => Math.min(1000, Math.max(0, (v / total) * 1000));
  const w = Math.max(2, x(s.at + s.ms) - x(s.at));
  return (
    <svg class="chart trace-bar" viewBox="0 0 1000 14" preserveAspectRatio="none" role="img" aria-label={`${s.label}: from ${ms(s.at)} for ${ms(s.ms)}`}>
      <rect class={BAR_CLASS[s.kind]} x={x(s.at)} y={2} width={w} height={10} />
      {s.firstAt !== undefined ? <rect class="bar-tick" x={x(s.firstAt)} y={0} width={3} height={14} /> : null}
    </svg>
  );
};

export const RequestTimeline: FC<{ record: LogRecord }> = ({ record }) => {
  const spans = spansOf(record);
  const end = Math.max(record.latencyMs ?? 0, ...spans.map((s) => s.at + s.ms), 1);
  return (
    <section class="card" aria-labelledby="req-timeline">
      <h2 id="req-timeline">Timeline and routing attempts</h2>
      {spans.length ? (
        <div class="table-wrap">
          <table id="trace" aria-label="Timeline">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">What</th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">Start</th>
                <th scope="col" class="num">TTFT</th>
                <th scope="col" class="num">Duration</th>
                <th scope="col" class="num">Tokens</th>
                <th scope="col" class="num">Cost</th>
                <th scope="col" class="trace-axis">0 – {ms(end)}</th>
              </tr>
            </thead>
            <tbody>
              {spans.map((s) => (
                <tr data-step={s.kind} data-provider={s.attempt?.a.provider}>
                  <td>{s.label}</td>
                  <td>
                    {s.detail}
                    {s.attempt?.a.providerKeyLabel || s.attempt?.a.providerKeyId ? <span class="muted small"> · key {s.attempt.a.providerKeyLabel ?? s.attempt.a.providerKeyId}</span> : null}
                  </td>
                  <td>{s.attempt ? failoverReason(s.attempt.a) : s.kind === "phase" ? "done" : ""}</td>
                  <td class="num">{ms(s.at)}</td>
                  <td class="num">{s.attempt ? ms(s.attempt.ttft) : "—"}</td>
                  <td class="num">{ms(s.ms)}</td>
                  <td class="num">{s.attempt?.tokens ?? "—"}</td>
                  <td class="num">{s.attempt?.cost ?? "—"}</td>
                  <td class="trace-axis">
                    <Bar s={s} total={end} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="empty">No step recorded (answered by the gateway before any provider was tried).</p>
      )}
      <p class="muted small">
        Total {ms(record.latencyMs)}{record.ttftMs !== null ? `; the answering provider's first token came ${ms(record.ttftMs)} after its attempt started` : ""}. Admission and the cache read run while the first attempt starts; a tick marks an attempt's first token. A lost hedge costs what its provider billed before it was cancelled.
      </p>
    </section>
  );
};

export const Conversation: FC<{ related: { by: "session" | "user"; value: string; rows: LogRecord[] } | null; current: string; href: (r: LogRecord) => string }> = ({ related, current, href }) => {
  if (!related) return null;
  const shown = related.rows.slice(0, 20);
  return (
    <section class="card" aria-labelledby="req-conversation">
      <h2 id="req-conversation">Conversation</h2>
      <p class="muted small">
        Requests with the same {related.by === "session" ? "x-session-id" : "user"} <code>{related.value}</code> within a day, oldest first{related.rows.length > shown.length ? " (the first 20)" : ""}.
      </p>
      <ol id="conversation">
        {shown.map((r) => (
          <li data-log-id={r.id}>
            {r.id === current ? (
              <strong aria-current="page">this request</strong>
            ) : (
              <a href={href(r)}>{new Date(r.createdAt).toISOString().replace("T", " ").slice(0, 19)} UTC</a>
            )}{" "}
            · {r.usedModel ?? r.requestedModel} · {r.statusCode}
          </li>
        ))}
      </ol>
    </section>
  );
};

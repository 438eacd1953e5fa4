/** @jsxImportSource hono/jsx */
/**
 * Server-rendered SVG charts (no client script, no CDN): stacked bars over time. Each chart has a
 * text summary for screen readers and a data table in a disclosure below it.
 */
import type { FC } from "hono/jsx";
import { compactNumber } from "./format";

export interface Bucket {
  start: number;
  values: number[];
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * Every bucket between `fromMs` (inclusive) and `toMs` (exclusive), with the values of the active
 * ones (the report lists only buckets with requests) and zeros elsewhere.
 */
export function fillBuckets(points: Array<{ start: string; values: number[] }>, fromMs: number, toMs: number, granularity: "day" | "hour", width: number): Bucket[] {
  const step = granularity === "day" ? DAY_MS : HOUR_MS;
  const byStart = new Map(points.map((p) => [Date.parse(p.start), p.values]));
  const out: Bucket[] = [];
  for (let t = fromMs; t < toMs; t += step) out.push({ start: t, values: byStart.get(t) ?? new Array<number>(width).fill(0) });
  return out;
}

/** A "nice" axis maximum: 1, 2, 2.5 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

const W = 600;
const H = 230;
// Room for the axis labels drawn larger on a phone (app.css): a cost label such as "$0.000025" on the left, the time labels below.
const PAD = { l: 104, r: 8, t: 12, b: 36 };
const CLASSES = ["bar", "bar2", "bar-bad", "bar-ok"];

const tickLabel = (ms: number, granularity: "day" | "hour"): string => {
  const iso = new Date(ms).toISOString();
  return granularity === "day" ? iso.slice(5, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
};

/** Half the width a tick label may take; a label closer than this to the right edge ends there instead of being cut. */
const LABEL_HALF = 45;

/** `minor`: every other label, hidden on a phone where the labels are drawn larger (app.css). */
const TickLabel: FC<{ center: number; text: string; minor: boolean }> = ({ center, text, minor }) =>
  center + LABEL_HALF > W - PAD.r ? (
    <text x={W - PAD.r} y={H - 6} text-anchor="end" class={minor ? "minor" : undefined}>
      {text}
    </text>
  ) : (
    <text x={center.toFixed(1)} y={H - 6} text-anchor="middle" class={minor ? "minor" : undefined}>
      {text}
    </text>
  );

export const BarChart: FC<{
  id: string;
  title: string;
  buckets: Bucket[];
  series: string[];
  granularity: "day" | "hour";
  format?: (n: number) => string;
  /** CSS classes of the series (colours); default brand blue, light blue, red, green. */
  classes?: string[];
}> = ({ id, title, buckets, series, granularity, format = compactNumber, classes = CLASSES }) => {
  const totals = buckets.map((b) => b.values.reduce((a, v) => a + v, 0));
  const sum = totals.reduce((a, v) => a + v, 0);
  const top = niceMax(Math.max(0, ...totals));
  const plotW = W - PAD.l - PAD.r;
  const plotH = H - PAD.t - PAD.b;
  const slot = plotW / Math.max(1, buckets.length);
  const barW = Math.max(1, slot * 0.72);
  const y = (v: number) => PAD.t + plotH - (v / top) * plotH;
  const labelEvery = Math.max(1, Math.ceil(buckets.length / 6));
  const summary = `${title}: ${format(sum)} in total over ${buckets.length} ${granularity === "day" ? "days" : "hours"}, at most ${format(Math.max(0, ...totals))} per ${granularity}.`;
  return (
    <figure class="card chart" aria-labelledby={`${id}-t`}>
      <figcaption>
        <h2 id={`${id}-t`}>{title}</h2>
        {series.length > 1 ? (
          <div class="legend" aria-hidden="true">
            {series.map((s, i) => (
              <span>
                <i class={classes[i]} />
                {s}
              </span>
            ))}
          </div>
        ) : null}
      </figcaption>
      {sum === 0 ? (
        <p class="empty chart-empty">
          Nothing in this period yet. Send a first request: create a key on the <a href="/dashboard/keys">Keys</a> page (it shows a ready-to-run curl command) or
          try a model in the <a href="/dashboard/playground">Playground</a>; it appears here within a minute.
        </p>
      ) : (
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary}>
        {[0, 0.5, 1].map((f) => (
          <g>
            <line class="axis" x1={PAD.l} x2={W - PAD.r} y1={y(top * f)} y2={y(top * f)} />
            <text x={PAD.l - 6} y={y(top * f) + 4} text-anchor="end" class="y">
              {format(top * f)}
            </text>
          </g>
        ))}
        {buckets.map((b, i) => {
          let base = 0;
          const x = PAD.l + i * slot + (slot - barW) / 2;
          return (
            <g>
              <title>{`${tickLabel(b.start, granularity)}: ${b.values.map((v, j) => `${series[j] ?? ""} ${format(v)}`).join(", ")}`}</title>
              {b.values.map((v, j) => {
                if (v <= 0) return null;
                const y0 = y(base);
                base += v;
                const y1 = y(base);
                return <rect class={classes[j] ?? "bar"} x={x.toFixed(1)} y={y1.toFixed(1)} width={barW.toFixed(1)} height={Math.max(0.5, y0 - y1).toFixed(1)} rx={1} />;
              })}
              {i % labelEvery === 0 ? <TickLabel center={x + barW / 2} text={tickLabel(b.start, granularity)} minor={(i / labelEvery) % 2 === 1} /> : null}
            </g>
          );
        })}
      </svg>
      )}
      <details>
        <summary>Data table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{granularity === "day" ? "Day (UTC)" : "Hour (UTC)"}</th>
                {series.map((s) => (
                  <th scope="col" class="num">
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {buckets
                .filter((_, i) => totals[i]! > 0)
                .map((b) => (
                  <tr>
                    <td>{tickLabel(b.start, granularity)}</td>
                    {b.values.map((v) => (
                      <td class="num">{format(v)}</td>
                    ))}
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
};

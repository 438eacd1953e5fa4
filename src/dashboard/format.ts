/** Small display helpers of the dashboard pages (pure, unit-tested in format.test.ts). */

const DATE_FMT = new Intl.DateTimeFormat("en-GB", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone: "UTC" });

/** `12 Mar 2026, 14:05 UTC`, or the fallback for null. */
export function formatDate(value: string | number | null, fallback = "—"): string {
  if (value === null) return fallback;
  const ms = typeof value === "number" ? value : Date.parse(value);
  return Number.isNaN(ms) ? fallback : `${DATE_FMT.format(ms)} UTC`;
}

/** Value for `<input type="datetime-local">` in UTC (the pages say so next to the field). */
export function toDateTimeLocal(ms: number | null): string {
  return ms === null ? "" : new Date(ms).toISOString().slice(0, 16);
}

// Formatters are built once: `Number#toLocaleString` builds a new one on every call (slow).
const USD_2 = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const USD_6 = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const INT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** `$1,234.56` for decimal-string USD amounts; more digits for small non-zero amounts. */
export function formatUsd(amount: string | null): string {
  if (amount === null) return "—";
  const n = Number(amount);
  if (!Number.isFinite(n)) return `$${amount}`;
  return `$${(n !== 0 && Math.abs(n) < 0.01 ? USD_6 : USD_2).format(n)}`;
}

/**
 * One precision for a whole column of USD amounts: enough decimals that its smallest non-zero
 * sub-cent amount keeps three significant digits (2 to 10 decimals), so `$0.04` and `$0.000243`
 * are not mixed in a column whose rows a reader compares.
 */
export function usdColumn(amounts: readonly number[]): (n: number) => string {
  let decimals = 2;
  for (const v of amounts) {
    // Cents are precise enough from a cent up; below, the first significant digit's position (0.000243 -> 4), then two more.
    if (v === 0 || !Number.isFinite(v) || Math.abs(v) >= 0.01) continue;
    decimals = Math.max(decimals, Math.min(10, Math.floor(-Math.log10(Math.abs(v))) + 3));
  }
  const fmt = new Intl.NumberFormat("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  return (n) => `$${fmt.format(n)}`;
}

/** 1234567 -> `1.2M`, 12345 -> `12.3k`. */
export function compactNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${trim(n / 1e9)}B`;
  if (abs >= 1e6) return `${trim(n / 1e6)}M`;
  if (abs >= 1e4) return `${trim(n / 1e3)}k`;
  return Number.isInteger(n) ? INT.format(n) : trim(n);
}

const trim = (x: number): string => x.toFixed(1).replace(/\.0$/, "");

const UNIT_LABEL: Record<string, string> = { hour: "hour", day: "day", week: "week", month: "month" };

/** `every 1 day`, `every 2 weeks`. */
export function windowLabel(value: number | null, unit: string | null): string {
  if (value === null || unit === null) return "";
  const u = UNIT_LABEL[unit] ?? unit;
  return value === 1 ? `per ${u}` : `per ${value} ${u}s`;
}

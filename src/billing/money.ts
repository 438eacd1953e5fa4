/**
 * Money is exact: a bigint count of pico-dollars (1e-12 USD). Prices and limits travel as decimal
 * strings ("0.00000015"), never as floats. Only the API's `usage.cost` number is a float, made at
 * the very end with `toUsdNumber`.
 */
export type Pico = bigint;

export const PICO_DECIMALS = 12;
const SCALE = 10n ** BigInt(PICO_DECIMALS);
const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

export const isDecimalString = (s: string): boolean => DECIMAL_RE.test(s);

/** Prices and limits are a small set of strings parsed on every request: parse each once. */
const parsed = new Map<string, Pico>();

/** "1.5" -> 1_500_000_000_000n. Digits past 12 decimals are rounded half-up. */
export function parseUsd(value: string): Pico {
  const hit = parsed.get(value);
  if (hit !== undefined) return hit;
  const v = parseUsdUncached(value);
  if (parsed.size >= 5000) parsed.clear();
  parsed.set(value, v);
  return v;
}

function parseUsdUncached(value: string): Pico {
  const m = DECIMAL_RE.exec(value.trim());
  if (!m) throw new RangeError(`not a decimal amount: ${value}`);
  const [, sign, whole = "0", frac = ""] = m;
  let units = BigInt(whole) * SCALE + BigInt((frac + "0".repeat(PICO_DECIMALS)).slice(0, PICO_DECIMALS) || "0");
  if (frac.length > PICO_DECIMALS && Number(frac[PICO_DECIMALS]) >= 5) units += 1n;
  return sign ? -units : units;
}

/** 1_500_000_000_000n -> "1.5"; no exponent, trailing zeros trimmed. */
export function formatUsd(p: Pico): string {
  const neg = p < 0n;
  const abs = neg ? -p : p;
  const whole = abs / SCALE;
  const frac = (abs % SCALE).toString().padStart(PICO_DECIMALS, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);
const PICO_PER_USD = 1e12;

/**
 * For JSON number fields only (spec 2.4 `usage.cost`): the double nearest to the exact amount.
 * Below 2^53 pico both operands of the division are exact doubles, and IEEE division rounds the
 * exact quotient once, so it is the same number as parsing the decimal string, without building
 * the string (a response carries 14 of these).
 */
export const toUsdNumber = (p: Pico): number =>
  p <= MAX_EXACT && p >= -MAX_EXACT ? Number(p) / PICO_PER_USD : Number(formatUsd(p));

export const picoFromDb = (v: number | string | bigint | null | undefined): Pico =>
  v === null || v === undefined ? 0n : BigInt(v);

const MAX_DB_PICO = BigInt(Number.MAX_SAFE_INTEGER);

/** Per-request costs fit a JS number as pico-dollars (< $9,007); aggregates are read with CAST AS TEXT. */
export function picoToDbNumber(p: Pico): number {
  if (p > MAX_DB_PICO || p < -MAX_DB_PICO) {
    throw new RangeError("amount too large for a per-request column");
  }
  return Number(p);
}

export const maxPico = (a: Pico, b: Pico): Pico => (a > b ? a : b);
export const minPico = (a: Pico, b: Pico): Pico => (a < b ? a : b);

import type { PeriodUnit } from "../db/schema";

const HOUR = 3_600_000;

/** End of a spend window that started at `start` (epoch ms). Months are calendar months (UTC), clamped to month end. */
export function addPeriod(start: number, value: number, unit: PeriodUnit): number {
  switch (unit) {
    case "hour":
      return start + value * HOUR;
    case "day":
      return start + value * 24 * HOUR;
    case "week":
      return start + value * 7 * 24 * HOUR;
    case "month": {
      const d = new Date(start);
      const targetMonth = d.getUTCMonth() + value;
      const firstOfTarget = Date.UTC(d.getUTCFullYear(), targetMonth, 1);
      const daysInTarget = new Date(Date.UTC(d.getUTCFullYear(), targetMonth + 1, 0)).getUTCDate();
      const day = Math.min(d.getUTCDate(), daysInTarget);
      return firstOfTarget + (day - 1) * 24 * HOUR + (start - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
    }
  }
}

/** Window length bounds (spec 2.1, 8): at least 1 hour, at most 12 months. */
export function isValidWindow(value: number, unit: PeriodUnit): boolean {
  if (!Number.isInteger(value) || value < 1) return false;
  const maxByUnit: Record<PeriodUnit, number> = { hour: 24 * 366, day: 366, week: 52, month: 12 };
  return value <= maxByUnit[unit];
}

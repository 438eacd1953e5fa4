/**
 * One CSV cell (RFC 4180 quoting), safe to open in a spreadsheet. Exported fields carry text
 * callers control (model ids, `x-source`, user agents, end-user ids); a cell starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return would be read as a formula, so it gets a leading `'`
 * (OWASP, CSV injection). A plain number such as `-1.5` is left as it is: no spreadsheet runs it.
 * The dashboard's Export CSV buttons do the same in the browser (public/dashboard/assets/csv.js).
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * One CSV cell: quoted when it holds a quote, comma or line break, and a cell a spreadsheet would
 * read as a formula (leading `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `'`, as
 * OWASP recommends, since exported fields can come from callers.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

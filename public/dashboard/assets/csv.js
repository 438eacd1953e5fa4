// CSV cells for the dashboard's "Export CSV" buttons (app.js), as the server writes them for log
// exports (src/lib/csv.ts; keep the two alike). Table cells hold text callers control (model ids,
// x-source, user agents, end-user ids): a cell a spreadsheet would take for a formula (first
// character = + - @, tab or carriage return) gets a leading ' (OWASP, CSV injection), except a
// plain number such as -1.5, which no spreadsheet runs. Classic script, loaded before app.js.
"use strict";
(() => {
  const FORMULA_START = /^[=+\-@\t\r]/;
  const PLAIN_NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
  const neutralised = (v) => (FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v);
  const quoted = (v) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  globalThis.SwitchboardCsv = Object.freeze({ cell: (value) => quoted(neutralised(String(value))) });
})();

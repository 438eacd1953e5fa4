/**
 * JSON Schemas as a reader takes them in on `/docs`: a short type line (`string, one of: a | b`,
 * `integer, 1 to 500`) and a table of an object's fields (name, type, required, description),
 * nested objects indented under their field; the raw schema stays one click away.
 */
type Json = Record<string, unknown>;

const asObject = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch);

/** Follows a local `#/components/...` reference. */
export function deref(doc: Json, node: Json): Json {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return node;
  let cur: unknown = doc;
  for (const part of ref.slice(2).split("/")) cur = asObject(cur)[part];
  return asObject(cur);
}

/** One line: the type and its constraints. */
export function typeLabel(doc: Json, raw: unknown, depth = 0): string {
  const s = deref(doc, asObject(raw));
  if (depth > 3) return "…";
  const variants = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(variants)) return variants.map((v) => typeLabel(doc, v, depth + 1)).join(" or ");
  if (Array.isArray(s.enum)) return `one of: ${(s.enum as unknown[]).map((v) => JSON.stringify(v)).join(" | ")}`;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const type = Array.isArray(s.type) ? (s.type as string[]).join(" or ") : typeof s.type === "string" ? s.type : Object.keys(asObject(s.properties)).length ? "object" : "any";
  const extra: string[] = [];
  if (type === "array") return `array of ${typeLabel(doc, s.items, depth + 1)}`;
  if (s.minimum !== undefined && s.maximum !== undefined) extra.push(`${String(s.minimum)} to ${String(s.maximum)}`);
  else if (s.minimum !== undefined) extra.push(`at least ${String(s.minimum)}`);
  else if (s.maximum !== undefined) extra.push(`at most ${String(s.maximum)}`);
  if (s.maxLength !== undefined) extra.push(`at most ${String(s.maxLength)} characters`);
  if (typeof s.format === "string") extra.push(s.format);
  if (s.default !== undefined) extra.push(`default ${JSON.stringify(s.default)}`);
  return extra.length ? `${type}, ${extra.join(", ")}` : type;
}

/** Table rows of an object's fields, nested objects (two levels) indented under their field. */
function fieldRows(doc: Json, schema: Json, prefix: string, depth: number): string[] {
  const s = deref(doc, schema);
  const props = asObject(s.properties);
  const required = new Set((s.required as string[] | undefined) ?? []);
  const rows: string[] = [];
  for (const [name, raw] of Object.entries(props)) {
    const field = deref(doc, asObject(raw));
    const desc = typeof field.description === "string" ? field.description : "";
    rows.push(`<tr><td><code>${escapeHtml(prefix + name)}</code></td><td>${escapeHtml(typeLabel(doc, field))}</td><td>${required.has(name) ? "required" : ""}</td><td>${escapeHtml(desc)}</td></tr>`);
    const inner = field.type === "array" ? deref(doc, asObject(field.items)) : field;
    if (depth < 2 && Object.keys(asObject(inner.properties)).length) rows.push(...fieldRows(doc, inner, `${prefix}${name}${field.type === "array" ? "[]" : ""}.`, depth + 1));
  }
  return rows;
}

/** An object schema as a field table, then its raw JSON Schema in a disclosure. */
export function schemaHtml(doc: Json, raw: unknown): string {
  const schema = deref(doc, asObject(raw));
  const rows = fieldRows(doc, schema, "", 0);
  const table = rows.length
    ? `<table class="fields"><tr><th>field</th><th>type</th><th></th><th>description</th></tr>${rows.join("")}</table>`
    : `<p>${escapeHtml(typeLabel(doc, schema))}</p>`;
  return `${table}<details class="raw"><summary>JSON Schema</summary><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></details>`;
}

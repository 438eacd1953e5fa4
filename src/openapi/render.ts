/**
 * Server-side HTML rendering of the OpenAPI document for `GET /docs`: a table of contents by
 * section (src/openapi/groups.ts: chat and models first, the operator last), then one entry per
 * operation (security, parameters, request body fields, responses).
 */
type Json = Record<string, unknown>;

import { deref, escapeHtml, schemaHtml, typeLabel } from "./schema-view";
import { groupRank } from "./groups";

const asObject = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** `GET /docs.css`: a file of its own, so the page's CSP (`style-src 'self'`, no inline style) applies it. */
export const DOCS_CSS = `:root{color-scheme:light dark;--ink:#1d2733;--bg:#fff;--line:#d9dee5;--pre:#f4f6f8;--link:#1f5fbf}
@media (prefers-color-scheme:dark){:root{--ink:#e6e8eb;--bg:#0f1217;--line:#2a303a;--pre:#171b22;--link:#8ea2ff}}
body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:var(--ink);background:var(--bg);overflow-wrap:anywhere}
a{color:var(--link)}h1{margin-bottom:0}
nav.tags{display:flex;flex-wrap:wrap;gap:.3rem .9rem;margin:1rem 0}nav.tags a{overflow-wrap:anywhere}
section.op{border-top:1px solid var(--line);padding:.6rem 0}
.m{display:inline-block;min-width:4.2rem;font:600 12px/1.8 ui-monospace,monospace;text-align:center;border-radius:4px;color:#fff;margin-right:.5rem}
.get{background:#2f7d32}.post{background:#1f5fbf}.patch{background:#a86400}.put{background:#6b4bb8}.delete{background:#b3261e}
code,pre{font:13px ui-monospace,monospace}p code{background:var(--pre);border-radius:3px;padding:0 .2rem}
pre{background:var(--pre);padding:.6rem;overflow:auto;max-height:24rem;max-width:100%}
table{border-collapse:collapse;display:block;max-width:100%;overflow-x:auto}td,th{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
details summary{cursor:pointer}
table.fields{margin:.4rem 0}table.fields td:first-child{white-space:nowrap}details.raw{margin:.3rem 0 .6rem;font-size:.9em}
@media (max-width:600px){body{margin:1rem auto;padding:0 .75rem}}
`;

/** Escapes, then shows `backticked` spans as code (the descriptions are written in Markdown style). */
const inline = (s: string): string => escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>");

export function renderReference(doc: Json): string {
  const info = asObject(doc.info);
  const paths = asObject(doc.paths);
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, raw] of Object.entries(asObject(item))) {
      const op = asObject(raw);
      const tag = String((op.tags as unknown[] | undefined)?.[0] ?? "other");
      const id = escapeHtml(String(op.operationId ?? `${method}${path}`));
      const security = (op.security as Json[] | undefined) ?? [];
      const who = security.length ? security.map((s) => Object.keys(s).join(" + ") || "anonymous").join(" or ") : "public";
      const params = ((op.parameters as Json[] | undefined) ?? []).map(
        (p) => `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? "required" : ""}</td><td>${escapeHtml(typeLabel(doc, p.schema))}</td></tr>`,
      );
      const content = asObject(asObject(op.requestBody).content);
      const bodies = Object.entries(content).map(([type, media]) => {
        const schema = deref(doc, asObject(asObject(media).schema));
        return `<details><summary>Request body <code>${escapeHtml(type)}</code></summary>${schemaHtml(doc, schema)}</details>`;
      });
      const responses = Object.entries(asObject(op.responses))
        .filter(([status]) => status !== "default")
        .map(([status, r]) => `<code>${escapeHtml(status)}</code> ${escapeHtml(String(asObject(r).description ?? ""))}`);
      const html = `<section class="op" id="${id}"><div><span class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span><code>${escapeHtml(path)}</code></div>
<p>${inline(String(op.summary ?? ""))}<br><small>auth: ${escapeHtml(who)}; responses: ${responses.join(", ")}; errors: the error envelope</small></p>
${params.length ? `<table><tr><th>parameter</th><th>in</th><th></th><th>schema</th></tr>${params.join("")}</table>` : ""}${bodies.join("")}</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const tags = [...byTag.keys()].sort((a, b) => groupRank(a) - groupRank(b) || a.localeCompare(b));
  const anchor = (t: string) => `tag-${t.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(String(info.title ?? "API"))} API reference</title><link rel="stylesheet" href="/docs.css"></head><body>
<h1>${escapeHtml(String(info.title ?? "API"))} API reference</h1><p>${inline(String(info.description ?? ""))} Version ${escapeHtml(String(info.version ?? ""))}. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<nav class="tags" aria-label="Sections">${tags.map((t) => `<a href="#${anchor(t)}">${escapeHtml(t)}</a>`).join("")}</nav>
${tags.map((t) => `<h2 id="${anchor(t)}">${escapeHtml(t)}</h2>${(byTag.get(t) ?? []).join("\n")}`).join("\n")}
</body></html>`;
}

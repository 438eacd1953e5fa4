/**
 * Server-side HTML rendering of the OpenAPI document for `GET /docs`: a table of contents by tag,
 * then one section per operation (security, parameters, request body schema, responses).
 */
type Json = Record<string, unknown>;

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] ?? ch);

const asObject = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** Follows a local `#/components/...` reference (one level; nested ones stay visible as `$ref`). */
function deref(doc: Json, node: Json): Json {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return node;
  let cur: unknown = doc;
  for (const part of ref.slice(2).split("/")) cur = asObject(cur)[part];
  return asObject(cur);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1d2733}
h1{margin-bottom:0}nav a{margin-right:.8rem}section.op{border-top:1px solid #d9dee5;padding:.6rem 0}
.m{display:inline-block;min-width:4.2rem;font:600 12px/1.8 ui-monospace,monospace;text-align:center;border-radius:4px;color:#fff;margin-right:.5rem}
.get{background:#2f7d32}.post{background:#1f5fbf}.patch{background:#a86400}.put{background:#6b4bb8}.delete{background:#b3261e}
code,pre{font:13px ui-monospace,monospace}pre{background:#f4f6f8;padding:.6rem;overflow:auto;max-height:24rem}
table{border-collapse:collapse}td,th{border:1px solid #d9dee5;padding:.2rem .5rem;text-align:left;vertical-align:top}details summary{cursor:pointer}`;

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
        (p) => `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? "required" : ""}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
      );
      const content = asObject(asObject(op.requestBody).content);
      const bodies = Object.entries(content).map(([type, media]) => {
        const schema = deref(doc, asObject(asObject(media).schema));
        return `<details><summary>Request body <code>${escapeHtml(type)}</code></summary><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></details>`;
      });
      const responses = Object.entries(asObject(op.responses))
        .filter(([status]) => status !== "default")
        .map(([status, r]) => `<code>${escapeHtml(status)}</code> ${escapeHtml(String(asObject(r).description ?? ""))}`);
      const html = `<section class="op" id="${id}"><div><span class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span><code>${escapeHtml(path)}</code></div>
<p>${escapeHtml(String(op.summary ?? ""))}<br><small>auth: ${escapeHtml(who)}; responses: ${responses.join(", ")}; errors: the error envelope</small></p>
${params.length ? `<table><tr><th>parameter</th><th>in</th><th></th><th>schema</th></tr>${params.join("")}</table>` : ""}${bodies.join("")}</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const tags = [...byTag.keys()].sort();
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(String(info.title ?? "API"))} API reference</title><style>${STYLE}</style></head><body>
<h1>${escapeHtml(String(info.title ?? "API"))} API reference</h1><p>${escapeHtml(String(info.description ?? ""))} Version ${escapeHtml(String(info.version ?? ""))}. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<nav>${tags.map((t) => `<a href="#tag-${escapeHtml(t)}">${escapeHtml(t)}</a>`).join("")}</nav>
${tags.map((t) => `<h2 id="tag-${escapeHtml(t)}">${escapeHtml(t)}</h2>${(byTag.get(t) ?? []).join("\n")}`).join("\n")}
</body></html>`;
}

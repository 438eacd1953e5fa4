/** @jsxImportSource hono/jsx */
/**
 * The page frame: stylesheet and the client scripts (static assets, CSP `'self'`), top bar with
 * navigation, organization and project switchers and "Sign out", and the secret dialog.
 */
import type { Child, FC } from "hono/jsx";
import { raw } from "hono/html";
import { isAdmin, type PageContext } from "./context";
import { exampleModelIds } from "./rule-preview";

export const ASSET_CSS = "/dashboard/assets/app.css";
export const ASSET_JS = "/dashboard/assets/app.js";
/** Applies the stored light/dark choice before the first paint (a tiny synchronous script). */
export const ASSET_THEME = "/dashboard/assets/theme.js";
/** CSV cells of the Export CSV buttons (formula-like cells neutralised), used by app.js. */
export const ASSET_CSV = "/dashboard/assets/csv.js";

/** `admin`: shown to owners and admins only (the page refuses developers). */
const NAV: ReadonlyArray<{ href: string; label: string; admin?: true }> = [
  { href: "/dashboard/keys", label: "Keys" },
  { href: "/dashboard/usage", label: "Usage" },
  { href: "/dashboard/requests", label: "Requests" },
  { href: "/dashboard/playground", label: "Playground" },
  { href: "/dashboard/access", label: "Access rules" },
  { href: "/dashboard/organization", label: "Organization" },
  { href: "/dashboard/platform", label: "Platform" },
  { href: "/dashboard/audit-log", label: "Audit log", admin: true },
];

/** A bare standards-mode document: head with the shared stylesheet; used by every HTML page. */
export const Document: FC<{ title: string; csrf?: string | undefined; script?: boolean; children?: Child }> = ({ title, csrf, script = true, children }) => (
  <>
  {raw("<!DOCTYPE html>")}
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      {csrf ? <meta name="csrf-token" content={csrf} /> : null}
      <title>{`${title} · Switchboard`}</title>
      <link rel="stylesheet" href={ASSET_CSS} />
      <script src={ASSET_THEME}></script>
      {script ? <script src={ASSET_CSV} defer></script> : null}
      {script ? <script src={ASSET_JS} defer></script> : null}
    </head>
    <body>{children}</body>
  </html>
  </>
);

const withProject = (href: string, ctx: PageContext): string => (ctx.project ? `${href}?project=${encodeURIComponent(ctx.project.id)}` : href);

/** A copyable code block of the new-secret dialog (filled in by app.js). */
const Snippet: FC<{ id: string; title: string; copyLabel: string }> = ({ id, title, copyLabel }) => (
  <div class="snippet">
    <div class="snippet-head">
      <span>{title}</span>
      <button class="sm" type="button" data-copy={id} aria-label={copyLabel}>
        Copy
      </button>
    </div>
    <pre id={id}></pre>
  </div>
);

export const Layout: FC<{ title: string; ctx: PageContext; children?: Child }> = ({ title, ctx, children }) => (
  <Document title={title} csrf={ctx.session.csrfToken}>
    <a class="skip" href="#main">
      Skip to content
    </a>
    <header class="top">
      <a class="brand" href="/dashboard">
        Switchboard
      </a>
      <nav class="nav" aria-label="Main">
        {NAV.filter((n) => !n.admin || isAdmin(ctx.session)).map((n) => (
          <a href={withProject(n.href, ctx)} aria-current={ctx.path.startsWith(n.href) ? "page" : undefined}>
            {n.label}
          </a>
        ))}
      </nav>
      <nav class="nav ext" aria-label="Reference">
        <a href="/docs">API docs</a>
        <a href="/mcp">MCP</a>
      </nav>
      <div class="who">
        <button class="btn sm theme-toggle" type="button" data-theme-toggle aria-pressed="false" hidden data-js-only>
          Dark mode
        </button>
        {ctx.organizations.length > 1 ? (
          <form method="get" action="/dashboard/sign-in">
            <label for="switch-org">Organization</label>
            <select id="switch-org" name="org">
              {ctx.organizations.map((o) => (
                <option value={o.id} selected={o.id === ctx.organization.id}>
                  {o.name}
                </option>
              ))}
            </select>
            <button class="btn sm" type="submit">
              Switch
            </button>
          </form>
        ) : null}
        {ctx.projects.length > 0 ? (
          <form method="get" action={ctx.path}>
            <label for="switch-project">Project</label>
            <select id="switch-project" name="project" data-autosubmit>
              {ctx.projects.map((p) => (
                <option value={p.id} selected={p.id === ctx.project?.id}>
                  {p.name}
                </option>
              ))}
            </select>
            <noscript>
              <button class="btn sm" type="submit">
                Go
              </button>
            </noscript>
          </form>
        ) : null}
        <span class="user">
          {ctx.session.email} · {ctx.session.role}
        </span>
        <form data-api="/api/auth/sign-out" data-redirect="/dashboard/sign-in">
          <button class="btn sm" type="submit">
            Sign out
          </button>
        </form>
      </div>
    </header>
    <main id="main">
      <p id="flash" class="alert" role="alert"></p>
      {children}
    </main>
    <dialog id="secret-dialog" aria-labelledby="secret-title" data-model={exampleModelIds(1)[0] ?? ""}>
      <h2 id="secret-title">Copy your new API key</h2>
      <p>
        <span id="secret-for"></span> This secret is shown only once: store it now. It cannot be displayed again; roll the key if it is lost.
      </p>
      <div class="secret">
        <label class="sr-only" for="secret-value">
          API key secret
        </label>
        <input id="secret-value" readonly autocomplete="off" spellcheck={false} />
        <button class="primary" type="button" data-copy="secret-value">
          Copy
        </button>
      </div>
      <h3>Use it</h3>
      <div class="secret">
        <label class="sr-only" for="secret-base">
          Base URL
        </label>
        <input id="secret-base" readonly aria-describedby="secret-base-hint" />
        <button type="button" data-copy="secret-base" aria-label="Copy the base URL">
          Copy
        </button>
      </div>
      <p class="hint" id="secret-base-hint">
        Base URL for any OpenAI-compatible client or SDK.
      </p>
      <Snippet id="secret-curl" title="curl" copyLabel="Copy the curl command" />
      <Snippet id="secret-sdk" title="Python (OpenAI SDK)" copyLabel="Copy the Python snippet" />
      <p class="actions">
        <button type="button" data-close="secret-dialog">
          Done
        </button>
      </p>
    </dialog>
  </Document>
);

/** Section heading with an optional right-hand side. */
export const PageHead: FC<{ title: string; sub?: Child; children?: Child }> = ({ title, sub, children }) => (
  <div class="page-head">
    <div>
      <h1>{title}</h1>
      {sub ? <p class="muted">{sub}</p> : null}
    </div>
    {children}
  </div>
);

/** The error line of a `data-api` form (filled by the client script) and its submit button. */
export const Submit: FC<{ label: string; class: string }> = ({ label, class: cls }) => (
  <>
    <p class="alert" role="alert" data-status></p>
    <button class={cls} type="submit">
      {label}
    </button>
  </>
);

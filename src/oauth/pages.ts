/**
 * HTML of the authorization endpoint: sign-in form, consent form (pick the key to act as), and
 * the error page for requests that cannot be redirected. Every interpolation goes through
 * hono/html's `html` tag, which escapes it.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { SelectableKey } from "./keys";

/** The validated authorization request, echoed in hidden fields of every form. */
export interface AuthorizeParams {
  response_type: string;
  client_id: string;
  redirect_uri: string;
  state?: string;
  scope?: string;
  code_challenge: string;
  code_challenge_method: string;
}

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The dashboard's stylesheet (a static asset); no inline style, so the page CSP stays strict. */
const STYLESHEET = "/dashboard/assets/app.css";

function layout(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <title>${title} · Switchboard</title>
    <link rel="stylesheet" href="${STYLESHEET}" />
  </head>
  <body>
    <div class="center-brand"><span class="brand">Switchboard</span></div>
    <main class="card narrow">${body}</main>
  </body>
</html>`;
}

function hiddenParams(p: AuthorizeParams): Html {
  return html`<input type="hidden" name="response_type" value="${p.response_type}" />
    <input type="hidden" name="client_id" value="${p.client_id}" />
    <input type="hidden" name="redirect_uri" value="${p.redirect_uri}" />
    <input type="hidden" name="code_challenge" value="${p.code_challenge}" />
    <input type="hidden" name="code_challenge_method" value="${p.code_challenge_method}" />
    ${p.state !== undefined ? html`<input type="hidden" name="state" value="${p.state}" />` : ""}
    ${p.scope !== undefined ? html`<input type="hidden" name="scope" value="${p.scope}" />` : ""}`;
}

const hostOf = (uri: string): string => {
  try {
    return new URL(uri).host;
  } catch {
    return uri;
  }
};

export function signInPage(p: AuthorizeParams, clientName: string, error?: string): Html {
  return layout(
    "Sign in",
    html`<h1>Sign in to connect ${clientName}</h1>
      <p class="muted">${clientName} wants to use Switchboard's MCP server on your behalf. Sign in to choose the API key it will act as.</p>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ""}
      <form method="post" action="/oauth/authorize">
        ${hiddenParams(p)}
        <input type="hidden" name="action" value="sign_in" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="row"><button class="primary" type="submit">Sign in</button></div>
      </form>`,
  );
}

export interface OrganizationChoice {
  id: string;
  name: string;
}

/** A multi-organization user picks the organization whose keys the consent page offers. */
function organizationPicker(p: AuthorizeParams, orgs: readonly OrganizationChoice[], currentOrgId: string, csrfToken: string): Html | string {
  if (orgs.length < 2) return "";
  return html`<form method="post" action="/oauth/authorize">
      ${hiddenParams(p)}
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <label for="organization_id">Organization</label>
      <select id="organization_id" name="organization_id">
        ${orgs.map((o) => (o.id === currentOrgId ? html`<option value="${o.id}" selected>${o.name}</option>` : html`<option value="${o.id}">${o.name}</option>`))}
      </select>
      <div class="row"><button class="secondary" type="submit" name="action" value="switch_org">Show this organization's keys</button></div>
    </form>`;
}

export function consentPage(
  p: AuthorizeParams,
  clientName: string,
  user: { email: string; organizationId: string },
  keys: SelectableKey[],
  csrfToken: string,
  orgs: readonly OrganizationChoice[] = [],
): Html {
  return layout(
    "Authorize",
    html`<h1>Authorize ${clientName}</h1>
      <p><strong>${clientName}</strong> will be able to use the MCP server (analytics, chat and image generation) as the API key you choose. It is redirected to <code>${hostOf(p.redirect_uri)}</code>.</p>
      <p class="muted">Signed in as ${user.email}. Requests are billed to and limited like the chosen key; disabling or deleting the key stops this access.</p>
      ${organizationPicker(p, orgs, user.organizationId, csrfToken)}
      <form method="post" action="/oauth/authorize">
        ${hiddenParams(p)}
        <input type="hidden" name="csrf_token" value="${csrfToken}" />
        ${keys.length
          ? html`<label for="key_id">API key</label>
              <select id="key_id" name="key_id" required>
                ${keys.map((k) => html`<option value="${k.id}">${k.projectName} · ${k.description || "(no description)"} · ${k.prefixHint}</option>`)}
              </select>`
          : html`<p class="error">You have no active API keys. Create one in the dashboard, then try again.</p>`}
        <div class="row">
          <button class="secondary" type="submit" name="action" value="deny">Deny</button>
          ${keys.length ? html`<button class="primary" type="submit" name="action" value="approve">Approve</button>` : ""}
        </div>
      </form>`,
  );
}

export function errorPage(message: string): Html {
  return layout("Authorization error", html`<h1>Authorization error</h1><p class="error">${message}</p><p class="muted">Return to the application and try again.</p>`);
}

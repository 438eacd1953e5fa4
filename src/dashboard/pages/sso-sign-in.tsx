/** @jsxImportSource hono/jsx */
/**
 * Single sign-on on the sign-in page: an e-mail field that starts `GET /dashboard/sso/start` (a
 * plain form: works without the client script), the page that picks an organization when several
 * allow the domain, the step to the provider, and the page that says why a sign-in was refused.
 */
import type { Child, FC } from "hono/jsx";
import { Document } from "../layout";

export const SsoSignInForm: FC<{ organizationId: string | null; email: string | null }> = ({ organizationId, email }) => (
  <form method="get" action="/dashboard/sso/start" class="sso-sign-in" aria-labelledby="sso-heading">
    <h2 id="sso-heading">Single sign-on</h2>
    {organizationId ? <input type="hidden" name="organization" value={organizationId} /> : null}
    <div class="field">
      <label for="sso-email">Work e-mail</label>
      <input id="sso-email" name="email" type="email" autocomplete="username" required value={email ?? ""} />
    </div>
    <button class="btn" type="submit">
      Sign in with SSO
    </button>
  </form>
);

const Card: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <Document title={title}>
    <main id="main">
      <div class="center-brand">
        <span class="brand">Switchboard</span>
      </div>
      <div class="card narrow">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  </Document>
);

export const SsoChooserPage: FC<{ email: string; organizations: { id: string; name: string }[] }> = ({ email, organizations }) => (
  <Card title="Choose an organization">
    <p class="muted">Several organizations let {email} sign in with SSO.</p>
    <ul>
      {organizations.map((o) => (
        <li>
          <a href={`/dashboard/sso/start?organization=${encodeURIComponent(o.id)}&email=${encodeURIComponent(email)}`}>{o.name}</a>
        </li>
      ))}
    </ul>
  </Card>
);

/** The step to the provider: the sign-in page's CSP (`form-action 'self'`) forbids a redirect. */
export const SsoContinuePage: FC<{ location: string; issuerHost: string }> = ({ location, issuerHost }) => (
  <Card title="Signing in with SSO">
    <p>
      Continuing to your identity provider at {issuerHost}...{" "}
      <a id="sso-continue" href={location}>
        Continue
      </a>
    </p>
  </Card>
);

export const SsoRefusedPage: FC<{ message: string }> = ({ message }) => (
  <Card title="Single sign-on failed">
    <p role="alert" class="error">
      {message}
    </p>
    <p>
      <a href="/dashboard/sign-in">Back to sign-in</a>
    </p>
  </Card>
);

/** The pages as JSX elements for src/routes/sso.ts (plain TypeScript). */
export const renderChooser = (email: string, organizations: { id: string; name: string }[]) => <SsoChooserPage email={email} organizations={organizations} />;
export const renderRefused = (message: string) => <SsoRefusedPage message={message} />;
export const renderContinue = (location: string) => <SsoContinuePage location={location} issuerHost={new URL(location).host} />;

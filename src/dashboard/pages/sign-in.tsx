/** @jsxImportSource hono/jsx */
/** Sign-in page: posts to `POST /api/auth/sign-in` (the session API), then opens the Keys page. */
import type { FC } from "hono/jsx";
import { Document, Submit } from "../layout";
import { SsoSignInForm } from "./sso-sign-in";

export const SignInPage: FC<{ organizationId: string | null; email: string | null }> = ({ organizationId, email }) => (
  <Document title="Sign in">
    <main id="main">
      <div class="center-brand">
        <span class="brand">Switchboard</span>
      </div>
      <div class="card narrow">
        <h1>Sign in</h1>
        <p class="muted">{organizationId ? "Sign in to the selected organization." : "Manage API keys, usage and access rules of your organization."}</p>
        <form data-api="/api/auth/sign-in" data-redirect="/dashboard/keys">
          {organizationId ? <input type="hidden" name="organizationId" value={organizationId} /> : null}
          <div class="field">
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ""} />
          </div>
          <div class="field">
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </div>
          <Submit class="primary" label="Sign in" />
        </form>
        <SsoSignInForm organizationId={organizationId} email={email} />
      </div>
    </main>
  </Document>
);

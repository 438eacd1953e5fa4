/** @jsxImportSource hono/jsx */
/**
 * Membership acceptance page (`/dashboard/accept#token=...`, docs/security.md). The one-time token
 * stays in the URL fragment, which browsers never send to the server: the client script reads it,
 * clears it from the address bar, and calls `POST /api/memberships/preview` then `/accept`. With no
 * fragment (an e-mail sent without PUBLIC_URL) the person pastes the token.
 */
import type { FC } from "hono/jsx";
import { Document } from "../layout";

export const AcceptPage: FC = () => (
  <Document title="Accept membership">
    <main id="main">
      <div class="center-brand">
        <span class="brand">Switchboard</span>
      </div>
      <div class="card narrow" id="accept">
        <h1>Accept membership</h1>
        <p class="alert" role="alert" id="accept-status"></p>
        <form id="accept-token" hidden>
          <p class="muted">Paste the invitation token from your e-mail.</p>
          <div class="field">
            <label for="accept-token-value">Invitation token</label>
            <input id="accept-token-value" name="token" autocomplete="off" spellcheck={false} required />
          </div>
          <button class="primary" type="submit">
            Continue
          </button>
        </form>
        <form id="accept-form" hidden>
          <p>
            You are invited to <strong id="accept-org"></strong> as <strong id="accept-role"></strong>.
          </p>
          <p class="muted small">
            Account: <span id="accept-email"></span>
          </p>
          <div class="field" id="accept-password-field" hidden>
            <label for="accept-password">Choose a password</label>
            <input id="accept-password" name="password" type="password" autocomplete="new-password" minlength={12} disabled />
            <p class="hint">At least 12 characters. You sign in with it from now on.</p>
          </div>
          <button class="primary" type="submit">
            Accept membership
          </button>
        </form>
        <div id="accept-done" hidden>
          <p class="notice" role="status">
            You are now a member of <strong id="accept-done-org"></strong>.
          </p>
          <a class="btn primary" id="accept-sign-in" href="/dashboard/sign-in">
            Sign in
          </a>
        </div>
      </div>
    </main>
  </Document>
);

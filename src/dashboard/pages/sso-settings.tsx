/** @jsxImportSource hono/jsx */
/**
 * The Organization page's single sign-on section (owners only): the OpenID Connect client the
 * organization registered at its identity provider, saved with `PUT /api/sso`. The client secret
 * field is always empty: the secret is never shown again, and leaving it empty keeps it.
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import { readSsoConfig, ssoRedirectUri, ssoView } from "../../sso/config";
import { Submit } from "../layout";

export type SsoSettingsView = { origin: string; sso: ReturnType<typeof ssoView> | null };

export async function loadSsoSettings(env: Env, organizationId: string, origin: string): Promise<SsoSettingsView> {
  const row = await readSsoConfig(env, organizationId);
  return { origin, sso: row ? ssoView(row, origin) : null };
}

export const SsoSettings: FC<{ data: SsoSettingsView }> = ({ data }) => {
  const s = data.sso;
  return (
    <section class="card" aria-labelledby="sso-title" id="sso">
      <h2 id="sso-title">Single sign-on</h2>
      <p class="muted small">
        OpenID Connect (Okta, Microsoft Entra ID, Google Workspace, Keycloak, ...). Register this redirect URI at your identity provider:{" "}
        <code>{ssoRedirectUri(data.origin)}</code>
      </p>
      <form data-api="/api/sso" data-method="PUT" data-success="Single sign-on saved.">
        <div class="field">
          <label for="sso-issuer">Issuer URL</label>
          <input id="sso-issuer" name="issuer" type="url" required placeholder="https://login.example.com" value={s?.issuer ?? ""} />
        </div>
        <div class="field">
          <label for="sso-client-id">Client ID</label>
          <input id="sso-client-id" name="clientId" required value={s?.clientId ?? ""} />
        </div>
        <div class="field">
          <label for="sso-client-secret">Client secret</label>
          <input id="sso-client-secret" name="clientSecret" type="password" autocomplete="off" required={!s} />
          <p class="hint">{s ? `Saved (${s.clientSecretHint}); never shown again. Leave empty to keep it.` : "Stored encrypted; never shown again."}</p>
        </div>
        <div class="field">
          <label for="sso-domains">Allowed e-mail domains</label>
          <input id="sso-domains" name="allowedDomains" data-type="list" required placeholder="example.com, example.org" value={s?.allowedDomains.join(", ") ?? ""} />
          <p class="hint">People with a verified address at these domains can sign in; those new to the organization join with the role below.</p>
        </div>
        <div class="field">
          <label for="sso-role">Role of new members</label>
          <select id="sso-role" name="defaultRole">
            <option value="developer" selected={s?.defaultRole !== "admin"}>Developer</option>
            <option value="admin" selected={s?.defaultRole === "admin"}>Admin</option>
          </select>
        </div>
        <label class="check">
          <input type="checkbox" name="required" checked={s?.required ?? false} />
          Require single sign-on (password sign-in is refused for everyone but one break-glass owner)
        </label>
        <p class="alert" role="alert" data-status></p>
        <Submit class="primary" label="Save single sign-on" />
      </form>
      {s ? (
        <form data-api="/api/sso" data-method="DELETE" data-confirm="Remove single sign-on? Members sign in with their passwords again." data-success="Single sign-on removed.">
          <button class="danger" type="submit">
            Remove single sign-on
          </button>
        </form>
      ) : null}
    </section>
  );
};

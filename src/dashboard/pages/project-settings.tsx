/** @jsxImportSource hono/jsx */
/**
 * The Organization page's project settings (owners and admins change them through
 * `PATCH /api/projects/{id}`): the response cache (opt-in) and its TTL, and keeping request bodies.
 */
import type { FC } from "hono/jsx";
import { MAX_CACHE_SECONDS } from "../../actions/projects";
import { Submit } from "../layout";

export interface ProjectSettingsView {
  id: string;
  name: string;
  cachingEnabled: boolean;
  cacheDurationSeconds: number;
  logBodies: boolean;
}

export const ProjectSettings: FC<{ project: ProjectSettingsView; admin: boolean }> = ({ project: p, admin }) => (
  <form class="card" data-api={`/api/projects/${p.id}`} data-method="PATCH" aria-labelledby={`proj-${p.id}`} data-success="Project settings saved.">
    <h2 id={`proj-${p.id}`}>{`Project: ${p.name}`}</h2>
    <fieldset disabled={!admin}>
      <legend>Response cache</legend>
      <label class="check">
        <input type="checkbox" name="cachingEnabled" checked={p.cachingEnabled} />
        Answer identical requests from the cache
      </label>
      <div class="field">
        <label for={`ttl-${p.id}`}>Cache lifetime (seconds)</label>
        <input id={`ttl-${p.id}`} name="cacheDurationSeconds" type="number" min={1} max={MAX_CACHE_SECONDS} data-type="int" value={String(p.cacheDurationSeconds)} />
        <p class="hint">
          Only an exact repeat of a request (same body, same project, any key of it) without a temperature above 0 is answered from the cache, at no cost. A request
          without <code>temperature</code> uses the provider's default, which is not deterministic: with the cache on, its repeats get the first answer.
        </p>
      </div>
    </fieldset>
    <fieldset disabled={!admin}>
      <legend>Request bodies</legend>
      <label class="check">
        <input type="checkbox" name="logBodies" checked={p.logBodies} />
        Keep each request's prompt and answer (shown on the request page, kept as long as the request log)
      </label>
    </fieldset>
    {admin ? <Submit class="primary" label="Save project" /> : <p class="muted small">Only owners and admins change these settings.</p>}
  </form>
);

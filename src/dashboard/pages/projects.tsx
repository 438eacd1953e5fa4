/** @jsxImportSource hono/jsx */
/**
 * The Organization page's projects: list, create (name and mode), rename and change the mode,
 * delete (not the default project; its keys go with it). Owners and admins change them through
 * `/api/projects` (the same actions as `/v1/master/projects`); developers see the list.
 */
import type { FC } from "hono/jsx";
import { PROJECT_MODES, type ProjectMode } from "../../db/schema";
import { Submit } from "../layout";
import { RemoveButton } from "./organization-forms";

export interface ProjectView {
  id: string;
  name: string;
  mode: ProjectMode;
  isDefault: boolean;
}

/** What each mode means to the person choosing it (docs/routing-and-cache.md, credentials per project mode). */
export const MODE_LABELS: Record<ProjectMode, string> = {
  credits: "Credits (the gateway's provider accounts)",
  "api-keys": "Own keys (the organization's provider keys)",
  hybrid: "Hybrid (own keys first, then credits)",
};

const ModeSelect: FC<{ id: string; value: ProjectMode; disabled?: boolean }> = ({ id, value, disabled }) => (
  <select id={id} name="mode" disabled={disabled}>
    {PROJECT_MODES.map((m) => (
      <option value={m} selected={m === value}>
        {MODE_LABELS[m]}
      </option>
    ))}
  </select>
);

const ProjectRow: FC<{ p: ProjectView; admin: boolean }> = ({ p, admin }) => (
  <tr data-project-id={p.id}>
    <td data-label="Project">
      {admin ? (
        <form class="inline" data-api={`/api/projects/${p.id}`} data-method="PATCH" data-success={`Project “${p.name}” saved.`} aria-label={`Settings of ${p.name}`}>
          <div class="field">
            <label for={`pname-${p.id}`}>Name</label>
            <input id={`pname-${p.id}`} name="name" value={p.name} maxlength={200} required />
          </div>
          <div class="field">
            <label for={`pmode-${p.id}`}>Mode</label>
            <ModeSelect id={`pmode-${p.id}`} value={p.mode} />
          </div>
          <Submit class="sm" label="Save" />
        </form>
      ) : (
        <>
          <strong>{p.name}</strong>
          <div class="muted small">{MODE_LABELS[p.mode]}</div>
        </>
      )}
    </td>
    <td data-label="Id">
      <code>{p.id}</code>
      {p.isDefault ? (
        <>
          {" "}
          <span class="badge info">default</span>
        </>
      ) : null}
    </td>
    {admin ? (
      <td data-label="Actions">
        {p.isDefault ? (
          <span class="muted small">The default project cannot be deleted.</span>
        ) : (
          <RemoveButton api={`/api/projects/${p.id}`} label="Delete" context={p.name} confirm={`Delete the project “${p.name}”? Its keys are deleted with it and refused at once. This cannot be undone.`} />
        )}
      </td>
    ) : null}
  </tr>
);

export const Projects: FC<{ projects: ProjectView[]; admin: boolean }> = ({ projects, admin }) => (
  <section class="card" id="projects" aria-labelledby="projects-title">
    <h2 id="projects-title">Projects</h2>
    <p class="hint">A project groups keys with their mode (which provider accounts pay), cache and routing defaults. Switch project in the top bar.</p>
    <div class="table-wrap">
      <table class="stack" aria-label="Projects">
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Id</th>
            {admin ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {projects.map((p) => (
            <ProjectRow p={p} admin={admin} />
          ))}
        </tbody>
      </table>
    </div>
    {admin ? (
      <form data-api="/api/projects" data-success="Project created: pick it in the top bar." aria-labelledby="new-project-title">
        <h3 id="new-project-title">Create a project</h3>
        <div class="row">
          <div class="field">
            <label for="new-project-name">Project name</label>
            <input id="new-project-name" name="name" maxlength={200} required placeholder="e.g. Research" />
          </div>
          <div class="field">
            <label for="new-project-mode">Mode</label>
            <ModeSelect id="new-project-mode" value="credits" />
          </div>
        </div>
        <Submit class="primary" label="Create project" />
      </form>
    ) : null}
  </section>
);

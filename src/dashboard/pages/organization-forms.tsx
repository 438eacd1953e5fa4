/** @jsxImportSource hono/jsx */
/**
 * The change forms of the Organization page (owners and admins): each is a `<form data-api>` the
 * client script turns into a JSON call to the session API (src/routes/dashboard/organization-admin.ts).
 * Secrets (provider tokens) are only ever typed in here; the page shows their hint.
 */
import type { FC } from "hono/jsx";
import { ROLES } from "../../db/schema";
import type { MemberView } from "../../actions/members";
import { Submit } from "../layout";
import { providerLabel } from "../labels";

const RoleOptions: FC<{ selected?: string }> = ({ selected }) => (
  <>
    {ROLES.map((r) => (
      <option value={r} selected={r === selected}>
        {r}
      </option>
    ))}
  </>
);

export const RoleForm: FC<{ member: MemberView }> = ({ member }) => (
  <form class="actions" data-api={`/api/members/${member.id}`} data-method="PATCH" data-success={`Role of ${member.email} saved.`}>
    <label class="sr-only" for={`role-${member.id}`}>{`Role of ${member.email}`}</label>
    <select id={`role-${member.id}`} name="role">
      <RoleOptions selected={member.role} />
    </select>
    <button class="sm" type="submit">
      Save role
    </button>
  </form>
);

/** `context` completes the button's name for screen readers (`Remove` + ` a@b.test from Platform`). */
export const RemoveButton: FC<{ api: string; label: string; confirm: string; context?: string }> = ({ api, label, confirm, context }) => (
  <form class="actions" data-api={api} data-method="DELETE" data-confirm={confirm}>
    <button class="sm danger" type="submit">
      {label}{context ? <span class="sr-only">{` ${context}`}</span> : null}
    </button>
  </form>
);

/** A team's members, each with a Remove button (owners and admins). */
export const TeamMemberList: FC<{ team: { id: string; name: string; memberIds: string[] }; members: MemberView[] }> = ({ team, members }) => {
  if (!team.memberIds.length) return <span class="muted">—</span>;
  return (
    <ul class="member-list">
      {team.memberIds.map((id) => {
        const email = members.find((m) => m.id === id)?.email ?? id;
        return (
          <li>
            <span>{email}</span>
            <RemoveButton
              api={`/api/teams/${team.id}/members/${id}`}
              label="Remove"
              context={`${email} from ${team.name}`}
              confirm={`Remove ${email} from the team ${team.name}? The team's rules stop applying to their keys.`}
            />
          </li>
        );
      })}
    </ul>
  );
};

export const TeamMemberForm: FC<{ team: { id: string; name: string; memberIds: string[] }; members: MemberView[] }> = ({ team, members }) => {
  const candidates = members.filter((m) => !team.memberIds.includes(m.id));
  if (!candidates.length) return <span class="muted small">Everyone is in this team.</span>;
  return (
    <form class="actions" data-api={`/api/teams/${team.id}/members`} data-success="Added to the team.">
      <label class="sr-only" for={`team-add-${team.id}`}>{`Member to add to ${team.name}`}</label>
      <select id={`team-add-${team.id}`} name="member">
        {candidates.map((m) => (
          <option value={m.id}>{m.email}</option>
        ))}
      </select>
      <button class="sm" type="submit">
        Add to team
      </button>
    </form>
  );
};

/** `success`: the message shown after the page reloads (the client script's flash). */
const Card: FC<{ id: string; title: string; api: string; success: string; children?: unknown }> = ({ id, title, api, success, children }) => (
  <section class="card" aria-labelledby={id}>
    <h2 id={id}>{title}</h2>
    <form data-api={api} data-success={success}>{children}</form>
  </section>
);

const Field: FC<{ id: string; label: string; children?: unknown; hint?: string }> = ({ id, label, children, hint }) => (
  <div class="field">
    <label for={id}>{label}</label>
    {children}
    {hint ? <p class="hint">{hint}</p> : null}
  </div>
);

export const InviteMember: FC = () => (
  <Card id="invite-title" title="Invite a member" api="/api/members" success="Invitation sent: the person gets an e-mail with a one-time link.">
    <div class="row">
      <Field id="invite-email" label="Email">
        <input id="invite-email" name="email" type="email" autocomplete="off" required />
      </Field>
      <Field id="invite-name" label="Name">
        <input id="invite-name" name="name" maxlength={200} required />
      </Field>
      <Field id="invite-role" label="Role">
        <select id="invite-role" name="role">
          <RoleOptions selected="developer" />
        </select>
      </Field>
    </div>
    <p class="hint">The person receives an e-mail with a one-time link; the membership stays pending until they accept it.</p>
    <Submit class="primary" label="Invite member" />
  </Card>
);

export const CreateTeam: FC = () => (
  <Card id="team-title" title="Create a team" api="/api/teams" success="Team created.">
    <Field id="team-name" label="Team name">
      <input id="team-name" name="name" maxlength={200} required />
    </Field>
    <Submit class="primary" label="Create team" />
  </Card>
);

export const AddProviderKey: FC<{ providers: readonly string[] }> = ({ providers }) => (
  <Card id="pk-title" title="Add a provider key" api="/api/provider-keys" success="Provider key added.">
    <div class="row">
      <Field id="pk-provider" label="Provider">
        <select id="pk-provider" name="provider">
          {providers.map((p) => (
            <option value={p}>{providerLabel(p)}</option>
          ))}
        </select>
      </Field>
      <Field id="pk-token" label="Provider API key">
        <input id="pk-token" name="token" type="password" autocomplete="off" spellcheck={false} required />
      </Field>
      <Field id="pk-base-url" label="Base URL (optional)">
        <input id="pk-base-url" name="baseUrl" type="url" placeholder="provider default" />
      </Field>
      <Field id="pk-label" label="Label (optional)">
        <input id="pk-label" name="label" maxlength={200} />
      </Field>
    </div>
    <p class="hint">Stored encrypted; only its last characters are ever shown again.</p>
    <Submit class="primary" label="Add provider key" />
  </Card>
);

/**
 * Edit in place (`PATCH /api/provider-keys/{id}`): a new token (empty keeps the current one), base
 * URL and label (emptied, they are cleared). A native disclosure: keyboard-usable, no script.
 */
export const EditProviderKey: FC<{ k: { id: string; provider: string; label: string | null; baseUrl: string | null; tokenHint: string } }> = ({ k }) => (
  <details class="edit-pk">
    <summary>
      Edit<span class="sr-only">{` the ${k.provider} key ${k.tokenHint}`}</span>
    </summary>
    <form class="editor" data-api={`/api/provider-keys/${k.id}`} data-method="PATCH">
      <Field id={`pk-edit-token-${k.id}`} label="New token (optional)" hint="Leave empty to keep the current token.">
        <input id={`pk-edit-token-${k.id}`} name="token" type="password" autocomplete="off" spellcheck={false} />
      </Field>
      <Field id={`pk-edit-base-url-${k.id}`} label="Base URL">
        <input id={`pk-edit-base-url-${k.id}`} name="baseUrl" type="url" value={k.baseUrl ?? ""} placeholder="provider default" data-empty="null" />
      </Field>
      <Field id={`pk-edit-label-${k.id}`} label="Label">
        <input id={`pk-edit-label-${k.id}`} name="label" maxlength={200} value={k.label ?? ""} data-empty="null" />
      </Field>
      <Submit class="sm primary" label="Save provider key" />
    </form>
  </details>
);

export const AddCustomProvider: FC = () => (
  <Card id="cp-title" title="Add a custom provider" api="/api/custom-providers" success="Custom provider added.">
    <Field id="cp-name" label="Provider name" hint="Lowercase letters, digits and '-'; models are called as name/model.">
      <input id="cp-name" name="name" maxlength={63} pattern="[a-z0-9][a-z0-9\-]{0,62}" required />
    </Field>
    <Field id="cp-base-url" label="OpenAI-compatible base URL">
      <input id="cp-base-url" name="baseUrl" type="url" placeholder="https://llm.example.com/v1" required />
    </Field>
    <Field id="cp-token" label="API key of the provider">
      <input id="cp-token" name="token" type="password" autocomplete="off" spellcheck={false} required />
    </Field>
    <Submit class="primary" label="Add custom provider" />
  </Card>
);

export const AddCustomModel: FC<{ providers: string[] }> = ({ providers }) =>
  providers.length ? (
    <Card id="cm-title" title="Add a custom model" api="/api/custom-models" success="Custom model added.">
      <Field id="cm-provider" label="Custom provider">
        <select id="cm-provider" name="providerName">
          {providers.map((p) => (
            <option value={p}>{p}</option>
          ))}
        </select>
      </Field>
      <Field id="cm-model" label="Model id">
        <input id="cm-model" name="modelId" maxlength={200} pattern="\S+" required />
      </Field>
      <Field id="cm-name" label="Display name (optional)">
        <input id="cm-name" name="name" maxlength={200} />
      </Field>
      <Submit class="primary" label="Add custom model" />
    </Card>
  ) : (
    <section class="card" aria-labelledby="cm-title">
      <h2 id="cm-title">Add a custom model</h2>
      <p class="muted">Add a custom provider first; its models are then callable as provider/model.</p>
    </section>
  );

/** @jsxImportSource hono/jsx */
/**
 * Organization page: credit balance, compliance and notification settings (owners and admins
 * change them through `PATCH /api/organization`), in-app budget alerts, members and teams,
 * provider keys (only the hint), custom providers and models.
 */
import type { FC } from "hono/jsx";
import { DataTable } from "../table";
import type { Env } from "../../env";
import { PROVIDER_IDS } from "../../catalog/types";
import { providerLabel } from "../labels";
import { listMembers } from "../../actions/members";
import { listTeams } from "../../actions/teams";
import { listProviderKeys } from "../../actions/provider-keys";
import { listCustomProviders } from "../../actions/custom-providers";
import { listCustomModels } from "../../actions/custom-models";
import { loadOrganization } from "../../actions/organization";
import { listNotifications } from "../../actions/notifications";
import { publicOrganization } from "../../organizations/view";
import { isAdmin, type PageContext } from "../context";
import { Layout, PageHead, Submit } from "../layout";
import {
  AddCustomModel,
  AddCustomProvider,
  AddProviderKey,
  CreateTeam,
  EditProviderKey,
  InviteMember,
  RemoveButton,
  RoleForm,
  TeamMemberForm,
  TeamMemberList,
} from "./organization-forms";
import { formatDate, formatUsd } from "../format";
import { loadSpendingLimits, SpendingLimits } from "./spending-limits";
import { NO_LIMITS } from "../../members/limits";
import { ProjectSettings } from "./project-settings";
import { Integrations, loadIntegrations } from "./integrations";
import { SsoSettings, loadSsoSettings } from "./sso-settings";
import { listProjects, loadProject } from "../../actions/projects";
import { healthByContinent, regionsInUse } from "../routing/data";
import { ProviderHealth, RoutingSection } from "../routing/routing-section";
import { Projects } from "./projects";
import { OrgSectionNav, sectionId, type OrgSection } from "./org-sections";

export async function loadOrganizationPage(env: Env, ctx: PageContext, origin = "") {
  const s = ctx.session;
  const org = s.organizationId;
  const [row, alerts, memberRows, teamRows, byok, customs, models, spendingLimits] = await Promise.all([
    loadOrganization(env, org),
    listNotifications(env, s, 20),
    listMembers(env, org),
    listTeams(env, org),
    listProviderKeys(env, org),
    listCustomProviders(env, org),
    listCustomModels(env, org),
    loadSpendingLimits(env, org),
  ]);
  const [project, integrations, regions, health, sso, projectList] = await Promise.all([
    ctx.project ? loadProject(env, org, ctx.project.id) : null,
    isAdmin(s) ? loadIntegrations(env, org) : null,
    ctx.project ? regionsInUse(env, ctx.project.id) : [],
    healthByContinent(env),
    s.role === "owner" ? loadSsoSettings(env, org, origin) : null,
    listProjects(env, org),
  ]);
  return { org: publicOrganization(row), alerts, members: memberRows, teams: teamRows, byok, customs, models, spendingLimits, project, integrations, regions, health, sso, projects: projectList };
}

type OrgData = Awaited<ReturnType<typeof loadOrganizationPage>>;

const Settings: FC<{ data: OrgData; admin: boolean }> = ({ data, admin }) => {
  const c = data.org.compliance;
  const n = data.org.notifications;
  const denied = new Set(c.deniedProviders ?? []);
  return (
    <div class="grid" id="settings">
      <form class="card" data-api="/api/organization" data-method="PATCH" aria-labelledby="compliance-title" data-success="Compliance settings saved.">
        <h2 id="compliance-title">Compliance</h2>
        <fieldset disabled={!admin}>
          <legend>Data use</legend>
          <label class="check">
            <input type="checkbox" name="compliance.noTraining" checked={c.noTraining === true} />
            Only providers that do not train on API data
          </label>
          <label class="check">
            <input type="checkbox" name="compliance.strictPolicy" checked={c.strictPolicy === true} />
            Strict policy: no provider call before the key's current rules are confirmed
          </label>
          <p class="hint">A rule change otherwise applies to every request starting 30 s after it; strict mode makes it immediate and adds one round trip to a key's budget object to requests that would otherwise start their provider call early.</p>
        </fieldset>
        <fieldset disabled={!admin}>
          <legend>Denied providers</legend>
          <div class="checks">
            {PROVIDER_IDS.map((p) => (
              <label class="check">
                <input type="checkbox" name="compliance.deniedProviders" value={p} data-type="list" checked={denied.has(p)} />
                {providerLabel(p)}
              </label>
            ))}
          </div>
        </fieldset>
        {admin ? (
          <Submit class="primary" label="Save compliance" />
        ) : (
          <p class="muted small">Only owners and admins change these settings.</p>
        )}
      </form>
      <form class="card" data-api="/api/organization" data-method="PATCH" aria-labelledby="notif-title" data-success="Notification settings saved.">
        <h2 id="notif-title">Notifications</h2>
        <fieldset disabled={!admin}>
          <legend>Budget alerts</legend>
          <label class="check">
            <input type="checkbox" name="notifications.apiKeyBudgets" checked={n.apiKeyBudgets} />
            Alert when an API key nears its spend limit
          </label>
          <div class="field">
            <label for="threshold">Alert threshold (%)</label>
            <input id="threshold" name="notifications.thresholdPercent" type="number" min={50} max={100} data-type="int" value={String(n.thresholdPercent)} />
            <p class="hint">Between 50 and 100 percent of a key's limit. Alerts appear below and are e-mailed to owners and admins.</p>
          </div>
        </fieldset>
        {admin ? <Submit class="primary" label="Save notifications" /> : null}
      </form>
      <RateLimitsForm data={data} admin={admin} />
      {data.project ? <ProjectSettings project={data.project} admin={admin} /> : null}
      {data.project ? <RoutingSection project={{ ...data.project, provider: data.project.providerPreferences ?? null }} regions={data.regions} residency={data.org.compliance.regions ?? []} admin={admin} /> : null}
      <ProviderHealth rows={data.health} />
      {data.integrations ? <Integrations data={data.integrations} /> : null}
      {data.sso ? <SsoSettings data={data.sso} /> : null}
    </div>
  );
};

/** The organization's requests / tokens per minute (empty: its ceiling, the plan's unless the operator raised it). */
const RateLimitsForm: FC<{ data: OrgData; admin: boolean }> = ({ data, admin }) => {
  const r = data.org.rateLimits;
  const own = (v: number, d: number) => (v === d ? "" : String(v));
  return (
    <form class="card" data-api="/api/organization" data-method="PATCH" aria-labelledby="rate-title">
      <h2 id="rate-title">Rate limits</h2>
      <fieldset disabled={!admin}>
        <legend>Whole organization</legend>
        <p class="hint">Every key and /mcp together.</p>
        <div class="field">
          <label for="org-rpm">Requests per minute</label>
          <input id="org-rpm" name="rateLimits.requestsPerMinute" type="number" min={1} max={r.max.requestsPerMinute} data-type="int" data-empty="null" value={own(r.requestsPerMinute, r.max.requestsPerMinute)} placeholder={`plan: ${r.planDefaults.requestsPerMinute}`} />
        </div>
        <div class="field">
          <label for="org-tpm">Tokens per minute</label>
          <input id="org-tpm" name="rateLimits.tokensPerMinute" type="number" min={1} max={r.max.tokensPerMinute} data-type="int" data-empty="null" value={own(r.tokensPerMinute, r.max.tokensPerMinute)} placeholder={`plan: ${r.planDefaults.tokensPerMinute}`} />
          <p class="hint">
            In force: {r.requestsPerMinute} requests and {r.tokensPerMinute} tokens per minute. At most {r.max.requestsPerMinute} and {r.max.tokensPerMinute}: plan values are ceilings, only the operator raises them. Empty uses the ceiling; over a limit, requests answer 429 with Retry-After.
          </p>
        </div>
      </fieldset>
      {admin ? <Submit class="primary" label="Save rate limits" /> : null}
    </form>
  );
};

/** A titled card around a data table (`enhance`: sortable, searchable and paged; long lists: members). */
function Table<T>(props: Parameters<typeof DataTable<T>>[0]) {
  return (
    <section class="card" id={sectionId(props.caption)} aria-label={props.caption}>
      <h2>{props.caption}</h2>
      <DataTable {...props} />
    </section>
  );
}

/** The page's sections in the order they appear (titles as their cards say them). */
const sections = (admin: boolean, data: OrgData): OrgSection[] => [
  { id: "settings", label: "Settings" },
  ...(data.project ? [{ id: `routing-${data.project.id}`, label: "Routing" }] : []),
  { id: "health-title", label: "Provider health" },
  ...(data.integrations ? [{ id: "integrations-title", label: "Integrations" }] : []),
  ...(data.sso ? [{ id: "sso", label: "Single sign-on" }] : []),
  { id: "projects", label: "Projects" },
  { id: sectionId("Budget alerts"), label: "Budget alerts" },
  { id: sectionId("Members"), label: "Members" },
  { id: sectionId("Teams"), label: "Teams" },
  ...(admin ? [{ id: "spending-limits", label: "Spending limits" }] : []),
  { id: sectionId("Provider keys (BYOK)"), label: "Provider keys" },
  { id: sectionId("Custom providers"), label: "Custom providers" },
  { id: sectionId("Custom models"), label: "Custom models" },
];

export const OrganizationPage: FC<{ ctx: PageContext; data: OrgData }> = ({ ctx, data }) => {
  const admin = isAdmin(ctx.session);
  return (
    <Layout title="Organization" ctx={ctx}>
      <PageHead title={data.org.name} sub={`Plan: ${data.org.plan} · your role: ${ctx.session.role}`} />
      <div class="stats">
        {admin ? (
          <div class="stat">
            <div class="label">Credits balance</div>
            <div class="value">{formatUsd(data.org.credits)}</div>
          </div>
        ) : null}
        <div class="stat">
          <div class="label">Members</div>
          <div class="value">{data.members.length}</div>
        </div>
        <div class="stat">
          <div class="label">Teams</div>
          <div class="value">{data.teams.length}</div>
        </div>
        <div class="stat">
          <div class="label">Provider keys</div>
          <div class="value">{data.byok.length}</div>
        </div>
      </div>
      <OrgSectionNav sections={sections(admin, data)} />
      <Settings data={data} admin={admin} />
      <Projects projects={data.projects} admin={admin} />
      <Table
        caption="Budget alerts"
        head={["When", "Message", "E-mailed"]}
        rows={data.alerts}
        cells={(a) => [formatDate(a.createdAt), a.message, a.emailedAt ? formatDate(a.emailedAt) : "no"]}
        empty="No budget alerts."
      />
      <Table
        caption="Members"
        enhance
        head={admin ? ["E-mail", "Name", "Role", "Status", "Actions"] : ["E-mail", "Name", "Role", "Status"]}
        rows={data.members}
        cells={(m) => [
          m.email,
          m.name,
          admin ? <RoleForm member={m} /> : m.role,
          <span class={`badge ${m.status === "active" ? "ok" : "warn"}`}>{m.status}</span>,
          ...(admin ? [<RemoveButton api={`/api/members/${m.id}`} label="Remove" confirm={`Remove ${m.email} from this organization?`} />] : []),
        ]}
        empty="No members."
      />
      {admin ? <InviteMember /> : null}
      <div class="grid">
        <Table
          caption="Teams"
          head={admin ? ["Team", "Members", "Add a member"] : ["Team", "Members"]}
          rows={data.teams}
          cells={(t) => [
            t.name,
            admin ? <TeamMemberList team={t} members={data.members} /> : t.memberIds.map((id) => data.members.find((m) => m.id === id)?.email ?? id).join(", ") || "—",
            ...(admin ? [<TeamMemberForm team={t} members={data.members} />] : []),
          ]}
          empty="No teams yet."
        />
        {admin ? <CreateTeam /> : null}
      </div>
      {admin ? (
        <SpendingLimits
        admin={admin}
        members={data.members.map((m) => ({ id: m.id, label: m.email, limits: data.spendingLimits.members.get(m.id) ?? NO_LIMITS }))}
        teams={data.teams.map((t) => ({ id: t.id, label: t.name, limits: data.spendingLimits.teams.get(t.id) ?? NO_LIMITS }))}
        />
      ) : null}
      <Table
        caption="Provider keys (BYOK)"
        head={admin ? ["Provider", "Label", "Key", "Base URL", "Actions"] : ["Provider", "Label", "Key", "Base URL"]}
        rows={data.byok}
        cells={(k) => [
          providerLabel(k.provider),
          k.label ?? "—",
          <code>{k.tokenHint}</code>,
          k.baseUrl ? <code>{k.baseUrl}</code> : "default",
          ...(admin
            ? [
                <>
                  <RemoveButton api={`/api/provider-keys/${k.id}`} label="Delete" confirm={`Delete the ${k.provider} key ${k.tokenHint}? Requests fall back to credits.`} />
                  <EditProviderKey k={k} />
                </>,
              ]
            : []),
        ]}
        empty="No provider keys: requests use credits."
      />
      {admin ? <AddProviderKey providers={PROVIDER_IDS} /> : null}
      <div class="grid">
        <Table
          caption="Custom providers"
          head={admin ? ["Name", "Base URL", "Key", "Actions"] : ["Name", "Base URL", "Key"]}
          rows={data.customs}
          cells={(p) => [
            p.name,
            <code>{p.baseUrl}</code>,
            <code>{p.tokenHint}</code>,
            ...(admin ? [<RemoveButton api={`/api/custom-providers/${p.id}`} label="Delete" confirm={`Delete the custom provider ${p.name} and its models?`} />] : []),
          ]}
          empty="No custom providers."
        />
        {admin ? <AddCustomProvider /> : null}
      </div>
      <div class="grid">
        <Table
          caption="Custom models"
          head={admin ? ["Model", "Name", "Actions"] : ["Model", "Name"]}
          rows={data.models}
          cells={(m) => [
            <code>{m.model}</code>,
            m.name ?? "—",
            ...(admin ? [<RemoveButton api={`/api/custom-models/${m.id}`} label="Delete" confirm={`Delete the model ${m.model}?`} />] : []),
          ]}
          empty="No custom models."
        />
        {admin ? <AddCustomModel providers={data.customs.map((p) => p.name)} /> : null}
      </div>
      {admin ? null : <p class="muted small">Owners and admins manage members, teams, provider keys and custom providers.</p>}
    </Layout>
  );
};

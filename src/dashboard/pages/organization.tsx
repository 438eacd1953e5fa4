/** @jsxImportSource hono/jsx */
/**
 * Organization page: credit balance, compliance and notification settings (owners and admins
 * change them through `PATCH /api/organization`), in-app budget alerts, members and teams,
 * provider keys (only the hint), custom providers and models.
 */
import type { FC } from "hono/jsx";
import { asc, count, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { customModels, customProviders, members, providerKeys, teamMembers, teams, users } from "../../db/schema";
import { PROVIDER_IDS } from "../../catalog/types";
import { loadOrganization } from "../../actions/organization";
import { listNotifications } from "../../actions/notifications";
import { publicOrganization } from "../../organizations/view";
import { isAdmin, type PageContext } from "../context";
import { Layout, PageHead, Submit } from "../layout";
import { formatDate, formatUsd } from "../format";

export async function loadOrganizationPage(env: Env, ctx: PageContext) {
  const s = ctx.session;
  const db = getDb(env.DB);
  const org = s.organizationId;
  const [row, alerts, memberRows, teamRows, byok, customs, models] = await Promise.all([
    loadOrganization(env, org),
    listNotifications(env, s, 20),
    db.select({ id: members.id, email: users.email, name: users.name, role: members.role }).from(members).innerJoin(users, eq(users.id, members.userId)).where(eq(members.organizationId, org)).orderBy(asc(users.email)),
    db
      .select({ id: teams.id, name: teams.name, size: count(teamMembers.memberId) })
      .from(teams)
      .leftJoin(teamMembers, eq(teamMembers.teamId, teams.id))
      .where(eq(teams.organizationId, org))
      .groupBy(teams.id)
      .orderBy(asc(teams.name)),
    db.select({ id: providerKeys.id, provider: providerKeys.provider, label: providerKeys.label, hint: providerKeys.tokenHint }).from(providerKeys).where(eq(providerKeys.organizationId, org)),
    db.select({ name: customProviders.name, baseUrl: customProviders.baseUrl, hint: customProviders.tokenHint }).from(customProviders).where(eq(customProviders.organizationId, org)),
    db.select({ provider: customModels.providerName, modelId: customModels.modelId, name: customModels.name }).from(customModels).where(eq(customModels.organizationId, org)),
  ]);
  return { org: publicOrganization(row), alerts, members: memberRows, teams: teamRows, byok, customs, models };
}

type OrgData = Awaited<ReturnType<typeof loadOrganizationPage>>;

const Settings: FC<{ data: OrgData; admin: boolean }> = ({ data, admin }) => {
  const c = data.org.compliance;
  const n = data.org.notifications;
  const denied = new Set(c.deniedProviders ?? []);
  return (
    <div class="grid">
      <form class="card" data-api="/api/organization" data-method="PATCH" aria-labelledby="compliance-title">
        <h2 id="compliance-title">Compliance</h2>
        <fieldset disabled={!admin}>
          <legend>Data use</legend>
          <label class="check">
            <input type="checkbox" name="compliance.noTraining" checked={c.noTraining === true} />
            Only providers that do not train on API data
          </label>
        </fieldset>
        <fieldset disabled={!admin}>
          <legend>Denied providers</legend>
          <div class="checks">
            {PROVIDER_IDS.map((p) => (
              <label class="check">
                <input type="checkbox" name="compliance.deniedProviders" value={p} data-type="list" checked={denied.has(p)} />
                {p}
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
      <form class="card" data-api="/api/organization" data-method="PATCH" aria-labelledby="notif-title">
        <h2 id="notif-title">Notifications</h2>
        <fieldset disabled={!admin}>
          <legend>Budget alerts</legend>
          <label class="check">
            <input type="checkbox" name="notifications.apiKeyBudgets" checked={n.apiKeyBudgets !== false} />
            Alert when an API key nears its spend limit
          </label>
          <div class="field">
            <label for="threshold">Alert threshold (%)</label>
            <input id="threshold" name="notifications.thresholdPercent" type="number" min={50} max={100} data-type="int" value={String(n.thresholdPercent ?? 80)} />
            <p class="hint">Between 50 and 100 percent of a key's limit. Alerts appear below and are e-mailed to owners and admins.</p>
          </div>
        </fieldset>
        {admin ? <Submit class="primary" label="Save notifications" /> : null}
      </form>
    </div>
  );
};

function Table<T>({ caption, head, rows, cells, empty }: { caption: string; head: string[]; rows: T[]; cells: (r: T) => unknown[]; empty: string }) {
  return (
    <section class="card" aria-label={caption}>
      <h2>{caption}</h2>
      {rows.length ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                {head.map((h) => (
                  <th scope="col">{h}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  {cells(r).map((c) => (
                    <td>{c}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="empty">{empty}</p>
      )}
    </section>
  );
}

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
      <Settings data={data} admin={admin} />
      <Table
        caption="Budget alerts"
        head={["When", "Message", "E-mailed"]}
        rows={data.alerts}
        cells={(a) => [formatDate(a.createdAt), a.message, a.emailedAt ? formatDate(a.emailedAt) : "no"]}
        empty="No budget alerts."
      />
      <div class="grid">
        <Table caption="Members" head={["E-mail", "Name", "Role"]} rows={data.members} cells={(m) => [m.email, m.name, m.role]} empty="No members." />
        <Table caption="Teams" head={["Team", "Members"]} rows={data.teams} cells={(t) => [t.name, String(t.size)]} empty="No teams yet." />
      </div>
      <div class="grid">
        <Table
          caption="Provider keys (BYOK)"
          head={["Provider", "Label", "Key"]}
          rows={data.byok}
          cells={(k) => [k.provider, k.label ?? "—", <code>{k.hint}</code>]}
          empty="No provider keys: requests use credits."
        />
        <Table
          caption="Custom providers"
          head={["Name", "Base URL", "Key"]}
          rows={data.customs}
          cells={(p) => [p.name, <code>{p.baseUrl}</code>, <code>{p.hint}</code>]}
          empty="No custom providers."
        />
      </div>
      <Table
        caption="Custom models"
        head={["Model", "Name"]}
        rows={data.models}
        cells={(m) => [<code>{`${m.provider}/${m.modelId}`}</code>, m.name ?? "—"]}
        empty="No custom models."
      />
      <p class="muted small">Members, teams, provider keys and custom providers are managed through the master API (see docs/dashboard.md).</p>
    </Layout>
  );
};

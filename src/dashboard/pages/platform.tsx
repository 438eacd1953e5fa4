/** @jsxImportSource hono/jsx */
/**
 * Platform page: the organization's master keys (owners only), credits (balance,
 * ledger of top-ups and corrections, low-balance alert threshold), platform secret keys, end-user
 * sessions and usage by end user (owners and admins). Every change
 * is a `<form data-api>` call to the session API; a new secret appears once in the secret dialog.
 */
import type { FC } from "hono/jsx";
import { DataTable } from "../table";
import type { Env } from "../../env";
import { listMasterKeys, type PublicMasterKey } from "../../organizations/master-keys";
import { listMembers } from "../../actions/members";
import { creditLedgerView } from "../../billing/credit-ledger";
import { listPlatformKeys } from "../../platform/platform-keys";
import { endUserUsage, listSessions } from "../../platform/sessions";
import { isAdmin, type PageContext } from "../context";
import { Layout, PageHead, Submit } from "../layout";
import { RemoveButton } from "./organization-forms";
import { formatDate, formatUsd } from "../format";

export async function loadPlatformPage(env: Env, ctx: PageContext) {
  const org = ctx.session.organizationId;
  const owner = ctx.session.role === "owner";
  const admin = isAdmin(ctx.session);
  const [masterKeys, memberRows, credits] = await Promise.all([
    owner ? listMasterKeys(env, org) : Promise.resolve([]),
    owner ? listMembers(env, org) : Promise.resolve([]),
    admin ? creditLedgerView(env, org, 50) : Promise.resolve(null),
  ]);
  const [platformKeys, sessions, usage] = admin
    ? await Promise.all([listPlatformKeys(env, org), listSessions(env, { organizationId: org }, { limit: 50 }), endUserUsage(env, org, { limit: 50 })])
    : [[], [], null];
  const emails = new Map(memberRows.map((m) => [m.id, m.email]));
  return { owner, admin, masterKeys, emails, credits, platformKeys, sessions, usage };
}

type PlatformData = Awaited<ReturnType<typeof loadPlatformPage>>;

const CREATOR_LABEL = { bootstrap: "organization setup", admin: "operator", master_api: "master API", dashboard: "dashboard" } as const;

function creatorOf(k: PublicMasterKey, data: PlatformData): string {
  const via = CREATOR_LABEL[k.createdBy.via];
  if (k.createdBy.via === "dashboard" && k.createdBy.id) return `${data.emails.get(k.createdBy.id) ?? k.createdBy.id} (${via})`;
  if (k.createdBy.via === "master_api" && k.createdBy.id) return `master key ${k.createdBy.id}`;
  return via;
}

const MasterKeys: FC<{ data: PlatformData }> = ({ data }) => (
  <section class="card" aria-labelledby="mk-title">
    <h2 id="mk-title">Master keys</h2>
    <p class="hint">
      Master keys call the master API (<code>/v1/master/*</code>) for the whole organization. Roll a key to replace its secret; revoke a leaked one. The old secret is refused from the
      next request on. The last active key cannot be revoked.
    </p>
    <DataTable
      caption="Master keys"
      head={["Key", "Description", "Status", "Created", "Created by", "Last used", "Actions"]}
      rows={data.masterKeys}
      empty="No master keys."
      cells={(k) => [
        <code>{k.prefix}</code>,
        k.description || "—",
        <span class={`badge ${k.status === "active" ? "ok" : "warn"}`}>{k.status === "active" ? "active" : `revoked ${formatDate(k.revokedAt)}`}</span>,
        formatDate(k.createdAt),
        creatorOf(k, data),
        formatDate(k.lastUsedAt, "never"),
        k.status === "active" ? (
          <>
            <form class="actions" data-api={`/api/master-keys/${k.id}/roll`} data-confirm={`Roll the master key ${k.prefix}? Its current secret stops working at once.`}>
              <button class="sm" type="submit">
                Roll<span class="sr-only">{` ${k.prefix}`}</span>
              </button>
            </form>
            <RemoveButton api={`/api/master-keys/${k.id}`} label="Revoke" context={k.prefix} confirm={`Revoke the master key ${k.prefix}? It stops working at once.`} />
          </>
        ) : null,
      ]}
    />
    <form data-api="/api/master-keys">
      <div class="field">
        <label for="mk-description">Description of a new master key</label>
        <input id="mk-description" name="description" maxlength={256} placeholder="e.g. CI provisioning" />
      </div>
      <Submit class="primary" label="Create master key" />
    </form>
  </section>
);

const Credits: FC<{ credits: NonNullable<PlatformData["credits"]> }> = ({ credits }) => (
  <section class="card" aria-labelledby="credits-title">
    <h2 id="credits-title">Credits</h2>
    <div class="stats">
      <div class="stat">
        <div class="label">Balance</div>
        <div class="value">{formatUsd(credits.balance)}</div>
      </div>
    </div>
    <p class="hint">Top-ups and corrections are made by the operator; usage is on the Usage page.</p>
    <DataTable
      caption="Credit ledger"
      head={["When", "Amount", "Balance after", "Reason", "Source"]}
      rows={credits.entries}
      empty="No credit entries yet."
      cells={(e) => [formatDate(e.createdAt), formatUsd(e.amount), formatUsd(e.balanceAfter), e.reason, e.source]}
    />
    <form data-api="/api/organization" data-method="PATCH">
      <div class="field">
        <label for="low-credits">E-mail owners when the balance falls below (USD)</label>
        <input id="low-credits" name="notifications.lowCreditsThreshold" inputmode="decimal" pattern="\d+(\.\d+)?" data-empty="null" value={credits.lowCreditsThreshold ?? ""} placeholder="off" />
        <p class="hint">$5 unless changed; empty turns the alert off. One e-mail (and one credits.low webhook event) each time the balance drops below it (again after the next top-up).</p>
      </div>
      <Submit class="primary" label="Save alert" />
    </form>
  </section>
);

const PlatformKeys: FC<{ ctx: PageContext; data: PlatformData }> = ({ ctx, data }) => {
  const projectName = new Map(ctx.projects.map((p) => [p.id, p.name]));
  return (
    <section class="card" aria-labelledby="sk-title">
      <h2 id="sk-title">Platform secret keys (sk_)</h2>
      <p class="hint">
        An app's backend uses a platform secret key to mint short-lived end-user sessions (see <code>docs/platform-keys.md</code>). Revoking a key also revokes every session it minted.
      </p>
      <DataTable
        caption="Platform secret keys"
        head={["Key", "Description", "Project", "Status", "Active sessions", "Last used", "Actions"]}
        rows={data.platformKeys}
        empty="No platform secret keys."
        cells={(k) => [
          <code>{k.prefix}</code>,
          k.description || "—",
          projectName.get(k.projectId) ?? k.projectId,
          <span class={`badge ${k.status === "active" ? "ok" : "warn"}`}>{k.status}</span>,
          String(k.activeSessions),
          formatDate(k.lastUsedAt, "never"),
          k.status === "active" ? (
            <>
              <form class="actions" data-api={`/api/platform-keys/${k.id}/roll`} data-confirm={`Roll ${k.prefix}? Its current secret stops working at once.`}>
                <button class="sm" type="submit">
                  Roll<span class="sr-only">{` ${k.prefix}`}</span>
                </button>
              </form>
              <RemoveButton api={`/api/platform-keys/${k.id}`} label="Revoke" context={k.prefix} confirm={`Revoke ${k.prefix} and every session it minted?`} />
            </>
          ) : null,
        ]}
      />
      <form data-api="/api/platform-keys">
        <div class="row">
          <div class="field">
            <label for="sk-project">Project</label>
            <select id="sk-project" name="projectId">
              {ctx.projects.map((p) => (
                <option value={p.id} selected={p.id === ctx.project?.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="sk-description">Description</label>
            <input id="sk-description" name="description" maxlength={256} placeholder="e.g. web app backend" />
          </div>
        </div>
        <Submit class="primary" label="Create platform secret key" />
      </form>
    </section>
  );
};

const Sessions: FC<{ data: PlatformData }> = ({ data }) => (
  <section class="card" aria-labelledby="eus-title">
    <h2 id="eus-title">End-user sessions</h2>
    <DataTable
      caption="End-user sessions, newest first"
      head={["End user", "Status", "Spent / cap", "Expires", "Actions"]}
      rows={data.sessions}
      empty="No end-user sessions yet."
      cells={(s) => [
        <code>{s.endUserId}</code>,
        <span class={`badge ${s.status === "active" ? "ok" : "warn"}`}>{s.status}</span>,
        `${formatUsd(s.spent ?? "0")} / ${formatUsd(s.spendCap)}`,
        formatDate(s.expiresAt),
        s.status === "active" ? (
          <>
            <RemoveButton api={`/api/end-user-sessions/${s.id}`} label="Revoke" context={`session of ${s.endUserId ?? ""}`} confirm={`Revoke this session of ${s.endUserId ?? ""}?`} />
            <RemoveButton
              api={`/api/end-user-sessions?endUserId=${encodeURIComponent(s.endUserId ?? "")}`}
              label="Revoke all of this user"
              context={s.endUserId ?? ""}
              confirm={`Revoke every session of ${s.endUserId ?? ""}?`}
            />
          </>
        ) : null,
      ]}
    />
    <h3>Usage by end user (last 30 days)</h3>
    <DataTable
      caption="Usage by end user"
      head={["End user", "Requests", "Tokens", "Cost", "Sessions"]}
      rows={data.usage?.endUsers ?? []}
      empty="No end-user usage in the analytics yet (it follows the hourly aggregation)."
      cells={(u) => [<code>{u.endUserId}</code>, String(u.requests), String(u.totalTokens), formatUsd(u.cost), String(u.sessions)]}
    />
  </section>
);

export const PlatformPage: FC<{ ctx: PageContext; data: PlatformData }> = ({ ctx, data }) => (
  <Layout title="Platform" ctx={ctx}>
    <PageHead title="Platform" sub="Credits, master keys, platform secret keys and end-user sessions of the organization" />
    {data.credits ? <Credits credits={data.credits} /> : null}
    {data.owner ? <MasterKeys data={data} /> : <p class="muted">Only owners manage master keys.</p>}
    {data.admin ? <PlatformKeys ctx={ctx} data={data} /> : null}
    {data.admin ? <Sessions data={data} /> : <p class="muted">Only owners and admins manage platform secret keys and end-user sessions.</p>}
  </Layout>
);

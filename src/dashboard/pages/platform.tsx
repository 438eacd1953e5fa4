/** @jsxImportSource hono/jsx */
/**
 * Platform page (issue 26): the organization's master keys (owners only) and credits (balance,
 * ledger of top-ups and corrections, low-balance alert threshold; owners and admins). Every change
 * is a `<form data-api>` call to the session API; a new secret appears once in the secret dialog.
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import { listMasterKeys, type PublicMasterKey } from "../../organizations/master-keys";
import { listMembers } from "../../actions/members";
import { creditLedgerView } from "../../billing/credit-ledger";
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
  const emails = new Map(memberRows.map((m) => [m.id, m.email]));
  return { owner, masterKeys, emails, credits };
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
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {["Key", "Description", "Status", "Created", "Created by", "Last used", "Actions"].map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {data.masterKeys.map((k) => (
            <tr>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>{k.description || "—"}</td>
              <td>
                <span class={`badge ${k.status === "active" ? "ok" : "warn"}`}>{k.status === "active" ? "active" : `revoked ${formatDate(k.revokedAt)}`}</span>
              </td>
              <td>{formatDate(k.createdAt)}</td>
              <td>{creatorOf(k, data)}</td>
              <td>{formatDate(k.lastUsedAt, "never")}</td>
              <td>
                {k.status === "active" ? (
                  <>
                    <form class="actions" data-api={`/api/master-keys/${k.id}/roll`} data-confirm={`Roll the master key ${k.prefix}? Its current secret stops working at once.`}>
                      <button class="sm" type="submit">
                        Roll<span class="sr-only">{` ${k.prefix}`}</span>
                      </button>
                    </form>
                    <RemoveButton api={`/api/master-keys/${k.id}`} label="Revoke" context={k.prefix} confirm={`Revoke the master key ${k.prefix}? It stops working at once.`} />
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
    {credits.entries.length ? (
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Credit ledger</caption>
          <thead>
            <tr>
              {["When", "Amount", "Balance after", "Reason", "Source"].map((h) => (
                <th scope="col">{h}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {credits.entries.map((e) => (
              <tr>
                <td>{formatDate(e.createdAt)}</td>
                <td>{formatUsd(e.amount)}</td>
                <td>{formatUsd(e.balanceAfter)}</td>
                <td>{e.reason}</td>
                <td>{e.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    ) : (
      <p class="empty">No credit entries yet.</p>
    )}
    <form data-api="/api/organization" data-method="PATCH">
      <div class="field">
        <label for="low-credits">E-mail owners when the balance falls below (USD)</label>
        <input id="low-credits" name="notifications.lowCreditsThreshold" inputmode="decimal" pattern="\d+(\.\d+)?" data-empty="null" value={credits.lowCreditsThreshold ?? ""} placeholder="off" />
        <p class="hint">Empty turns the alert off. One e-mail each time the balance drops below it (again after the next top-up).</p>
      </div>
      <Submit class="primary" label="Save alert" />
    </form>
  </section>
);

export const PlatformPage: FC<{ ctx: PageContext; data: PlatformData }> = ({ ctx, data }) => (
  <Layout title="Platform" ctx={ctx}>
    <PageHead title="Platform" sub="Master keys and credits of the organization" />
    {data.credits ? <Credits credits={data.credits} /> : null}
    {data.owner ? <MasterKeys data={data} /> : <p class="muted">Only owners manage master keys.</p>}
  </Layout>
);

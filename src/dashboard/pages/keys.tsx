/** @jsxImportSource hono/jsx */
/**
 * Keys page: the project's keys (developers: their own) with spend, limits and expiry, the create
 * form (TTL, limits, an optional first rule) and per-key actions. Spend is the settled figure D1
 * holds (no call to the keys' objects; it lags by about a second). Every action posts to the
 * session API (`/api/keys...`), which calls the shared services in src/keys/.
 */
import type { FC } from "hono/jsx";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { apiKeys, members, users } from "../../db/schema";
import { keyListWhere, listKeysWithSpend } from "../../actions/keys";
import { loadOrganization } from "../../actions/organization";
import { DEFAULT_THRESHOLD_PERCENT, effectiveNotifications } from "../../organizations/notification-settings";
import type { KeyListItem } from "../../keys/view";
import { ownerFilter } from "../../routes/dashboard/keys";
import type { PageContext } from "../context";
import { Layout, PageHead, Submit } from "../layout";
import { formatDate, formatUsd, windowLabel } from "../format";
import { KeyEditor } from "./key-editor";
import { exampleModelIds } from "../rule-preview";
import { ModelRefsData } from "../model-refs";

type KeyView = KeyListItem & { creator: string; lastUsedAt: number | null; expiresAtMs: number | null; alertThresholdPercent: number | null };

/**
 * A key's last use: its row in `key_last_use` (kept by the log consumer; never ages out with the
 * request-log window), one primary-key lookup per listed key. Column names are written out:
 * drizzle leaves columns unqualified in a select list, which a correlated subquery cannot use.
 */
const lastUseOf = sql<number | null>`(SELECT u.last_used_at FROM key_last_use AS u WHERE u.api_key_id = "api_keys"."id" AND u.organization_id = "api_keys"."organization_id")`;

export async function loadKeys(env: Env, ctx: PageContext): Promise<{ keys: KeyView[]; thresholdPercent: number; alertsOn: boolean }> {
  if (!ctx.project) return { keys: [], thresholdPercent: DEFAULT_THRESHOLD_PERCENT, alertsOn: true };
  const s = ctx.session;
  const db = getDb(env.DB);
  const filter = { projectId: ctx.project.id, ...ownerFilter(s) };
  // Settled spend from D1 for every key: no call to the keys' objects (src/actions/keys.ts).
  const [listed, org] = await Promise.all([listKeysWithSpend(env, s.organizationId, filter), loadOrganization(env, s.organizationId)]);
  // Creators and last use select the listed keys by a subquery on the list's own condition, never
  // by their ids: D1 binds at most 100 parameters per statement (src/db/client.ts), and a project
  // can have more keys.
  const listedKeys = keyListWhere(s.organizationId, filter);
  const [creators, lastUsed] = await Promise.all([
    listed.length
      ? db
          .select({ id: members.id, email: users.email })
          .from(members)
          .innerJoin(users, eq(users.id, members.userId))
          .where(and(eq(members.organizationId, s.organizationId), inArray(members.id, db.selectDistinct({ id: apiKeys.createdBy }).from(apiKeys).where(listedKeys))))
      : Promise.resolve([]),
    listed.length ? db.select({ id: apiKeys.id, at: lastUseOf }).from(apiKeys).where(listedKeys) : Promise.resolve([]),
  ]);
  const creatorOf = new Map(creators.map((c) => [c.id, c.email]));
  const lastOf = new Map(lastUsed.map((l) => [l.id, l.at]));
  return {
    keys: listed.map(({ row, apiKey }) => ({
      ...apiKey,
      creator: creatorOf.get(row.createdBy) ?? "former member",
      lastUsedAt: lastOf.get(row.id) ?? null,
      expiresAtMs: row.expiresAt,
      alertThresholdPercent: row.alertThresholdPercent,
    })),
    thresholdPercent: effectiveNotifications(org.notifications).thresholdPercent,
    alertsOn: effectiveNotifications(org.notifications).apiKeyBudgets,
  };
}

/** An active key at a spend limit is refused (401 `usage_limit_reached`): it is not shown as healthy. */
const StatusBadge: FC<{ k: KeyView }> = ({ k }) =>
  k.expired ? (
    <span class="badge bad">expired</span>
  ) : k.status !== "active" ? (
    <span class="badge warn">disabled</span>
  ) : k.limitState?.reached ? (
    <span class="badge bad" title="Spending requests with this key answer 401 usage_limit_reached until a limit is raised or the window resets.">
      limit reached
    </span>
  ) : (
    <span class="badge ok">active</span>
  );

/** "limit reached" under a spend / limit cell, with when the recurring window resets. */
const Reached: FC<{ resetsAt?: string | null | undefined }> = ({ resetsAt }) => (
  <div class="small">
    <span class="badge bad">limit reached</span>
    {resetsAt ? <span class="muted"> · resets {formatDate(resetsAt)}</span> : null}
  </div>
);

/**
 * Collapsed until asked for (a `<details>`, no script needed), so the keys themselves open the
 * page; opened when the project has no key yet.
 */
const CreateForm: FC<{ projectId: string; open: boolean }> = ({ projectId, open }) => (
  <details class="card create" open={open}>
    <summary class="btn primary">Create a key</summary>
    <section aria-labelledby="create-title">
    <h2 id="create-title">Create a key</h2>
    <form data-api="/api/keys">
      <input type="hidden" name="projectId" value={projectId} />
      <div class="row">
        <div class="field">
          <label for="new-description">Description</label>
          <input id="new-description" name="description" maxlength={256} placeholder="e.g. Backend production" />
        </div>
        <div class="field">
          <label for="new-ttl">Expires after</label>
          <input id="new-ttl" name="expiresIn.value" type="number" min={1} step={1} data-type="int" placeholder="never" />
        </div>
        <div class="field">
          <label for="new-ttl-unit">Unit</label>
          <select id="new-ttl-unit" name="expiresIn.unit" data-with="new-ttl">
            <option value="minute">minutes</option>
            <option value="hour">hours</option>
            <option value="day" selected>
              days
            </option>
          </select>
        </div>
      </div>
      <div class="row">
        <div class="field">
          <label for="new-limit">All-time limit (USD)</label>
          <input id="new-limit" name="usageLimit" inputmode="decimal" placeholder="no limit" />
        </div>
        <div class="field">
          <label for="new-plimit">Recurring limit (USD)</label>
          <input id="new-plimit" name="periodUsageLimit" inputmode="decimal" placeholder="no limit" />
        </div>
        <div class="field">
          <label for="new-pvalue">Window length</label>
          <input id="new-pvalue" name="periodUsageDurationValue" type="number" min={1} data-type="int" placeholder="1" />
        </div>
        <div class="field">
          <label for="new-punit">Window unit</label>
          <select id="new-punit" name="periodUsageDurationUnit">
            <option value="">none</option>
            <option value="hour">hours</option>
            <option value="day">days</option>
            <option value="week">weeks</option>
            <option value="month">months</option>
          </select>
        </div>
        <div class="field">
          <label for="new-rpm">Requests / min</label>
          <input id="new-rpm" name="requestsPerMinute" type="number" min={1} data-type="int" placeholder="organization's" />
        </div>
        <div class="field">
          <label for="new-tpm">Tokens / min</label>
          <input id="new-tpm" name="tokensPerMinute" type="number" min={1} data-type="int" placeholder="organization's" />
        </div>
        <div class="field">
          <label for="new-threshold">Alert threshold (%)</label>
          <input id="new-threshold" name="alertThresholdPercent" type="number" min={50} max={100} data-type="int" placeholder="organization's" />
        </div>
      </div>
      <div class="field">
        <label for="new-deny-models">Deny models (optional IAM rule)</label>
        <input id="new-deny-models" data-rule-type="deny_models" data-rule-field="models" data-model-list placeholder={`e.g. ${exampleModelIds(2).join(", ")}`} aria-describedby="new-deny-hint new-deny-error" />
        <p class="hint" id="new-deny-hint">
          Comma-separated model ids. More rules (allow lists, providers, pricing, IP ranges) on the Access rules page.
        </p>
        <p class="alert" id="new-deny-error" aria-live="polite"></p>
        <ModelRefsData custom={null} />
      </div>
      <Submit class="primary" label="Create key" />
    </form>
    </section>
  </details>
);

const KeyActions: FC<{ k: KeyView }> = ({ k }) => {
  const api = `/api/keys/${k.id}`;
  const name = k.description || k.maskedKey;
  const playground = k.kind === "playground";
  return (
    <div>
      <div class="actions">
        {k.status === "active" && !k.expired ? (
          <form data-api={api} data-method="PATCH">
            <button class="sm" type="submit" data-only-json data-json='{"status":"inactive"}' aria-describedby={`d-${k.id}`}>
              Disable
            </button>
          </form>
        ) : k.expired ? null : (
          <form data-api={api} data-method="PATCH">
            <button class="sm" type="submit" data-only-json data-json='{"status":"active"}' aria-describedby={`d-${k.id}`}>
              Enable
            </button>
          </form>
        )}
        {playground ? null : (
          <form data-api={`${api}/roll`} data-confirm={`Roll “${name}”? A new secret is issued and the current one stops working at once.`}>
            <button class="sm" type="submit" aria-describedby={`d-${k.id}`}>
              Roll
            </button>
          </form>
        )}
        {playground ? null : (
          <form data-api={api} data-method="DELETE" data-confirm={`Delete “${name}”? Requests with it are refused at once. This cannot be undone.`}>
            <button class="sm danger" type="submit" aria-describedby={`d-${k.id}`}>
              Delete
            </button>
          </form>
        )}
      </div>
      {k.expired ? (
        <form class="editor" data-api={api} data-method="PATCH">
          <p class="small">This key has expired. Enabling it needs a new expiry in the future.</p>
          <div class="field">
            <label for={`reenable-${k.id}`}>New expiry (UTC)</label>
            <input id={`reenable-${k.id}`} name="expiresAt" type="datetime-local" data-type="datetime" required />
          </div>
          <input type="hidden" name="status" value="active" />
          <Submit class="sm primary" label="Enable" />
        </form>
      ) : null}
      <a class="small" href={`?project=${encodeURIComponent(k.projectId)}&edit=${encodeURIComponent(k.id)}#edit`} aria-describedby={`d-${k.id}`}>
        Edit
      </a>
    </div>
  );
};

const KeyRowView: FC<{ k: KeyView; thresholdPercent: number; alertsOn: boolean }> = ({ k, thresholdPercent, alertsOn }) => (
  <tr data-key-id={k.id}>
    <td data-label="Description">
      <strong id={`d-${k.id}`}>{k.description || "(no description)"}</strong>
      {k.kind === "playground" ? (
        <>
          {" "}
          <span class="badge info">playground</span>
        </>
      ) : k.kind === "coding-plan" ? (
        <>
          {" "}
          <span class="badge">coding plan</span>
        </>
      ) : null}
    </td>
    <td data-label="Key">
      <code>{k.maskedKey}</code>
    </td>
    <td data-label="Status">
      <StatusBadge k={k} />
      {k.limitState?.member?.reached ? (
        <div class="muted small">
          owner's spending limit: {formatUsd(k.limitState.member.allTime?.reached ? k.limitState.member.allTime.spent : (k.limitState.member.recurring?.spent ?? null))} /{" "}
          {formatUsd(k.limitState.member.allTime?.reached ? k.limitState.member.allTime.limit : (k.limitState.member.recurring?.limit ?? null))}
          {!k.limitState.member.allTime?.reached && k.limitState.member.recurring?.resetsAt ? ` · resets ${formatDate(k.limitState.member.recurring.resetsAt)}` : ""}
        </div>
      ) : null}
    </td>
    <td data-label="Expires">{formatDate(k.expiresAt, "never")}</td>
    <td data-label="All-time" class="num">
      {formatUsd(k.usage)}
      {k.usageLimit !== null ? <span class="muted"> / {formatUsd(k.usageLimit)}</span> : <span class="muted"> / no limit</span>}
      {k.limitState?.allTime?.reached ? <Reached /> : null}
    </td>
    <td data-label="Recurring" class="num">
      {k.periodUsageLimit !== null ? (
        <>
          {formatUsd(k.periodUsage)}
          <span class="muted">
            {" "}
            / {formatUsd(k.periodUsageLimit)} {windowLabel(k.periodUsageDurationValue, k.periodUsageDurationUnit)}
          </span>
          {k.limitState?.recurring?.reached ? <Reached resetsAt={k.periodEndsAt} /> : k.periodEndsAt ? <div class="muted small">resets {formatDate(k.periodEndsAt)}</div> : null}
        </>
      ) : (
        <span class="muted">no limit</span>
      )}
    </td>
    <td data-label="Alert at">{k.usageLimit !== null || k.periodUsageLimit !== null ? (alertsOn ? `${k.alertThresholdPercent ?? thresholdPercent}%` : "off") : "—"}</td>
    <td data-label="Creator">{k.creator}</td>
    <td data-label="Last used">{formatDate(k.lastUsedAt, "never")}</td>
    <td data-label="Actions">
      <KeyActions k={k} />
    </td>
  </tr>
);

export const KeysPage: FC<{ ctx: PageContext; keys: KeyView[]; thresholdPercent: number; alertsOn: boolean; editId?: string | undefined }> = ({
  ctx,
  keys,
  thresholdPercent,
  alertsOn,
  editId,
}) => (
  <Layout title="Keys" ctx={ctx}>
    <PageHead
      title="Keys"
      sub={
        ctx.project
          ? `${ctx.project.name} · ${ctx.session.role === "developer" ? "keys you created" : "every key of the project"}`
          : "This organization has no project yet."
      }
    />
    {ctx.project ? <CreateForm projectId={ctx.project.id} open={keys.length === 0} /> : null}
    <section aria-labelledby="keys-title">
      <h2 id="keys-title" class="sr-only">
        API keys
      </h2>
      <div class="table-wrap">
        <table class="stack" data-enhance aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Description</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Expires</th>
              <th scope="col" class="num">
                All-time spend / limit
              </th>
              <th scope="col" class="num">
                Recurring spend / limit
              </th>
              <th scope="col">Alert at</th>
              <th scope="col">Creator</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.length ? (
              keys.map((k) => (
                <>
                  <KeyRowView k={k} thresholdPercent={thresholdPercent} alertsOn={alertsOn} />
                  {k.id === editId ? <KeyEditor k={k} /> : null}
                </>
              ))
            ) : (
              <tr>
                <td colspan={10} class="empty">
                  No keys yet. Create one above.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  </Layout>
);

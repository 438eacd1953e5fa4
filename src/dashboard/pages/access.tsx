/** @jsxImportSource hono/jsx */
/**
 * Access rules page: rules of a key (anyone who may see the key), of a member or of a team
 * (owners and admins; admins cannot change an owner's rules, spec 5 rule 6). Each rule shows the
 * exact 403 wording it produces. Changes go to the session API (`/api/{keys|members|teams}/{id}/iam`).
 */
import type { FC } from "hono/jsx";
import { asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { RULE_TYPES, customProviders, members, teams, users, type RuleLevel } from "../../db/schema";
import { getDb } from "../../db/client";
import { PROVIDER_IDS } from "../../catalog/types";
import { listModels } from "../../catalog";
import { listKeys } from "../../actions/keys";
import { listRules, publicRule, type RuleTarget } from "../../iam/rules";
import { FIELD_OF } from "../../iam/rule-body";
import { ownerFilter } from "../../routes/dashboard/keys";
import { isAdmin, type PageContext } from "../context";
import { Layout, PageHead, Submit } from "../layout";
import { denialPreview, exampleModelIds, OUTSIDE_IPS, PREVIEW_SAMPLE, SAMPLE_VALUES } from "../rule-preview";
import { ModelRefsData } from "../model-refs";
import { providerLabel, ruleTypeLabel } from "../labels";

type Rule = ReturnType<typeof publicRule>;

export interface AccessData {
  keys: Array<{ id: string; label: string }>;
  members: Array<{ id: string; label: string; role: string }>;
  teams: Array<{ id: string; label: string }>;
  customProviders: string[];
  target: { level: RuleLevel; id: string; label: string; editable: boolean } | null;
  rules: Rule[];
}

export async function loadAccess(env: Env, ctx: PageContext, q: { key?: string | undefined; member?: string | undefined; team?: string | undefined }): Promise<AccessData> {
  const s = ctx.session;
  const admin = isAdmin(s);
  const db = getDb(env.DB);
  const [keyRows, memberRows, teamRows, customRows] = await Promise.all([
    ctx.project ? listKeys(env, s.organizationId, { projectId: ctx.project.id, ...ownerFilter(s) }) : Promise.resolve([]),
    admin
      ? db.select({ id: members.id, email: users.email, role: members.role }).from(members).innerJoin(users, eq(users.id, members.userId)).where(eq(members.organizationId, s.organizationId)).orderBy(asc(users.email))
      : Promise.resolve([]),
    admin ? db.select({ id: teams.id, name: teams.name }).from(teams).where(eq(teams.organizationId, s.organizationId)).orderBy(asc(teams.name)) : Promise.resolve([]),
    db.select({ name: customProviders.name }).from(customProviders).where(eq(customProviders.organizationId, s.organizationId)).orderBy(asc(customProviders.name)),
  ]);
  const keys = keyRows.map((k) => ({ id: k.id, label: `${k.description || "(no description)"} · ${k.prefixHint}` }));
  const membersList = memberRows.map((m) => ({ id: m.id, label: `${m.email} (${m.role})`, role: m.role }));
  const teamsList = teamRows.map((t) => ({ id: t.id, label: t.name }));

  let target: AccessData["target"] = null;
  const member = q.member ? membersList.find((m) => m.id === q.member) : undefined;
  const team = q.team ? teamsList.find((t) => t.id === q.team) : undefined;
  const key = keys.find((k) => k.id === q.key) ?? (member || team ? undefined : keys[0]);
  if (member) target = { level: "member", id: member.id, label: member.label, editable: member.role !== "owner" || s.role === "owner" };
  else if (team) target = { level: "team", id: team.id, label: team.label, editable: true };
  else if (key) target = { level: "key", id: key.id, label: key.label, editable: true };

  const rules = target ? (await listRules(env, { organizationId: s.organizationId, level: target.level, targetId: target.id } satisfies RuleTarget)).map(publicRule) : [];
  return { keys, members: membersList, teams: teamsList, customProviders: customRows.map((c) => c.name), target, rules };
}

const PATH: Record<RuleLevel, string> = { key: "keys", member: "members", team: "teams" };
const SOURCE_LABEL: Record<RuleLevel, string> = { key: "Key", member: "Member", team: "Team" };

const valueText = (r: Rule): string => {
  const v = r.ruleValue;
  return (v.models ?? v.providers?.map(providerLabel) ?? v.ipCidrs ?? (v.pricingType ? [v.pricingType] : [])).join(", ");
};

const TargetPicker: FC<{ ctx: PageContext; data: AccessData }> = ({ ctx, data }) => {
  const pick = (name: "key" | "member" | "team", label: string, options: Array<{ id: string; label: string }>) => (
    <form method="get" action="/dashboard/access" class="inline">
      {ctx.project ? <input type="hidden" name="project" value={ctx.project.id} /> : null}
      <div class="field">
        <label for={`pick-${name}`}>{label}</label>
        <select id={`pick-${name}`} name={name} data-autosubmit>
          <option value="">Choose…</option>
          {options.map((o) => (
            <option value={o.id} selected={data.target?.level === name && data.target.id === o.id}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <button class="sm" type="submit">
        Open
      </button>
    </form>
  );
  return (
    <div class="card grid">
      {pick("key", "Key rules", data.keys)}
      {isAdmin(ctx.session) ? pick("member", "Member rules", data.members) : null}
      {isAdmin(ctx.session) ? pick("team", "Team rules", data.teams) : null}
    </div>
  );
};

const RuleForm: FC<{ ctx: PageContext; data: AccessData; level: RuleLevel; id: string }> = ({ ctx, data, level, id }) => {
  const enterprise = ctx.organization.plan === "enterprise";
  const providers = [...PROVIDER_IDS, "custom", ...data.customProviders.map((n) => `custom:${n}`)];
  const examples = exampleModelIds(2);
  return (
    <form class="card" data-api={`/api/${PATH[level]}/${encodeURIComponent(id)}/iam`} data-rule-form data-success="Rule added." data-outside-ips={OUTSIDE_IPS.join(" ")}>
      <ModelRefsData custom={data.customProviders} />
      <h2>Add a rule</h2>
      <div class="row">
        <div class="field">
          <label for="rule-type">Rule type</label>
          <select id="rule-type" name="ruleType">
            {RULE_TYPES.map((t) => (
              <option value={t} disabled={!enterprise && FIELD_OF[t] === "ipCidrs"} data-preview={denialPreview(level, t, SAMPLE_VALUES[t]) ?? ""} data-sample={PREVIEW_SAMPLE[t]}>
                {ruleTypeLabel(t)}
                {!enterprise && FIELD_OF[t] === "ipCidrs" ? " (Enterprise plan)" : ""}
              </option>
            ))}
          </select>
        </div>
      </div>
      <fieldset data-field="models">
        <legend>Models</legend>
        <div class="inline">
          <div class="field">
            <label for="model-search">Search the catalogue</label>
            <input id="model-search" list="model-options" placeholder={`Type to search, e.g. ${examples[0] ?? ""}`} aria-describedby="model-error" />
          </div>
          <button class="sm" type="button" data-add-model="model-search" data-into="rule-models" hidden data-js-only>
            Add model
          </button>
        </div>
        <datalist id="model-options">
          {listModels().map((m) => (
            <option value={m.id}>{m.name}</option>
          ))}
        </datalist>
        <div class="field">
          <label for="rule-models">Models in this rule</label>
          <textarea id="rule-models" name="ruleValue.models" data-type="list" data-model-list rows={2} placeholder={examples.join(", ")} required aria-describedby="model-error"></textarea>
          <p class="alert" id="model-error" aria-live="polite"></p>
        </div>
      </fieldset>
      <fieldset data-field="providers">
        <legend>Providers</legend>
        <div class="checks">
          {providers.map((p) => (
            <label class="check">
              <input type="checkbox" name="ruleValue.providers" value={p} data-type="list" />
              {providerLabel(p)}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset data-field="pricingType">
        <legend>Pricing</legend>
        <div class="field">
          <label for="rule-pricing">Pricing type</label>
          <select id="rule-pricing" name="ruleValue.pricingType">
            <option value="free">free</option>
            <option value="paid">paid</option>
          </select>
        </div>
      </fieldset>
      <fieldset data-field="ipCidrs">
        <legend>IP ranges</legend>
        <div class="field">
          <label for="rule-cidrs">CIDRs</label>
          <textarea id="rule-cidrs" name="ruleValue.ipCidrs" data-type="list" data-cidrs rows={2} placeholder="10.0.0.0/8, 2001:db8::/32" aria-describedby="cidr-hint cidr-error"></textarea>
          <p class="hint" id="cidr-hint">
            IPv4 or IPv6 ranges; single addresses are written /32 or /128. The client IP is read from CF-Connecting-IP, else X-Forwarded-For.
          </p>
          <p class="alert" id="cidr-error" aria-live="polite"></p>
        </div>
      </fieldset>
      <p class="small muted">Requests this rule refuses get a 403 with this message:</p>
      <p class="preview" data-preview aria-live="polite">
        {denialPreview(level, "allow_models", SAMPLE_VALUES.allow_models)}
      </p>
      <Submit class="primary" label="Add rule" />
    </form>
  );
};

const RulesTable: FC<{ data: AccessData; level: RuleLevel; id: string; editable: boolean }> = ({ data, level, id, editable }) => {
  const base = `/api/${PATH[level]}/${encodeURIComponent(id)}/iam`;
  return (
    <div class="table-wrap">
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Values</th>
            <th scope="col">Status</th>
            <th scope="col">Denial message</th>
            {editable ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {data.rules.length ? (
            data.rules.map((r) => (
              <tr>
                <td data-label="Rule">{ruleTypeLabel(r.ruleType)}</td>
                <td data-label="Values">{valueText(r)}</td>
                <td data-label="Status">{r.status === "active" ? <span class="badge ok">active</span> : <span class="badge warn">inactive</span>}</td>
                <td data-label="Denial message">
                  <span class="preview block">{denialPreview(level, r.ruleType, r.ruleValue) ?? "—"}</span>
                </td>
                {editable ? (
                  <td data-label="Actions">
                    <div class="actions">
                      <form data-api={`${base}/${r.id}`} data-method="PATCH">
                        <button class="sm" type="submit" data-only-json data-json={JSON.stringify({ status: r.status === "active" ? "inactive" : "active" })}>
                          {r.status === "active" ? "Disable" : "Enable"}
                        </button>
                      </form>
                      <form data-api={`${base}/${r.id}`} data-method="DELETE" data-confirm={`Delete this ${ruleTypeLabel(r.ruleType)} rule?`} data-success="Rule deleted.">
                        <button class="sm danger" type="submit">
                          Delete
                        </button>
                      </form>
                    </div>
                  </td>
                ) : null}
              </tr>
            ))
          ) : (
            <tr>
              <td colspan={5} class="empty">
                No rules: nothing is restricted at this level.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
};

export const AccessPage: FC<{ ctx: PageContext; data: AccessData }> = ({ ctx, data }) => (
  <Layout title="Access rules" ctx={ctx}>
    <PageHead
      title="Access rules"
      sub="Team rules apply first, then member rules, then key rules; each layer can only narrow the previous one. A matching deny rule always refuses."
    />
    <TargetPicker ctx={ctx} data={data} />
    {data.target ? (
      <>
        <section class="card" aria-labelledby="rules-title">
          <h2 id="rules-title">
            {SOURCE_LABEL[data.target.level]} rules · {data.target.label}
          </h2>
          {data.target.editable ? null : <p class="notice">Admins cannot modify an owner's rules.</p>}
          <RulesTable data={data} level={data.target.level} id={data.target.id} editable={data.target.editable} />
        </section>
        {data.target.editable ? <RuleForm ctx={ctx} data={data} level={data.target.level} id={data.target.id} /> : null}
      </>
    ) : (
      <p class="empty card">Choose a key{isAdmin(ctx.session) ? ", member or team" : ""} to see its rules.</p>
    )}
  </Layout>
);

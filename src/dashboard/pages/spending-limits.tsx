/** @jsxImportSource hono/jsx */
/**
 * The Organization page's spending limits of members and teams (src/members/): one form per
 * member and per team, posting to `PATCH /api/members/{id}/limits` and `/api/teams/{id}/limits`
 * (owners and admins; admins cannot change an owner's). Empty fields clear a limit.
 */
import type { FC } from "hono/jsx";
import { eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { members, teams } from "../../db/schema";
import type { LimitState } from "../../keys/limits";
import { limitsOf } from "../../members/limits";
import { Submit } from "../layout";

export interface LimitTarget {
  id: string;
  label: string;
  limits: LimitState;
}

/** The stored limits of the organization's members and teams, by id. */
export async function loadSpendingLimits(env: Env, organizationId: string): Promise<{ members: Map<string, LimitState>; teams: Map<string, LimitState> }> {
  const db = getDb(env.DB);
  const [m, t] = await Promise.all([
    db.select().from(members).where(eq(members.organizationId, organizationId)),
    db.select().from(teams).where(eq(teams.organizationId, organizationId)),
  ]);
  return { members: new Map(m.map((r) => [r.id, limitsOf(r)])), teams: new Map(t.map((r) => [r.id, limitsOf(r)])) };
}

/** The recurring window's unit of a spending-limit form (keys, members, teams); "none": no window. */
export const PeriodUnitSelect: FC<{ id: string; value: string | null | undefined }> = ({ id, value }) => (
  <select id={id} name="periodUsageDurationUnit" data-empty="null">
    <option value="">none</option>
    {(["hour", "day", "week", "month"] as const).map((u) => (
      <option value={u} selected={value === u}>
        {`${u}s`}
      </option>
    ))}
  </select>
);

const LimitForm: FC<{ api: string; target: LimitTarget; disabled: boolean }> = ({ api, target, disabled }) => {
  const l = target.limits;
  const id = target.id;
  return (
    <form data-api={api} data-method="PATCH" aria-label={`Spending limits of ${target.label}`}>
      <fieldset disabled={disabled}>
        <div class="row">
          <div class="field">
            <label for={`sl-all-${id}`}>All-time (USD)</label>
            <input id={`sl-all-${id}`} name="usageLimit" value={l.usageLimit ?? ""} data-empty="null" inputmode="decimal" placeholder="no limit" />
          </div>
          <div class="field">
            <label for={`sl-per-${id}`}>Recurring (USD)</label>
            <input id={`sl-per-${id}`} name="periodUsageLimit" value={l.periodUsageLimit ?? ""} data-empty="null" inputmode="decimal" placeholder="no limit" />
          </div>
          <div class="field">
            <label for={`sl-val-${id}`}>Window length</label>
            <input id={`sl-val-${id}`} name="periodUsageDurationValue" type="number" min={1} data-type="int" data-empty="null" value={l.periodUsageDurationValue?.toString() ?? ""} />
          </div>
          <div class="field">
            <label for={`sl-unit-${id}`}>Window unit</label>
            <PeriodUnitSelect id={`sl-unit-${id}`} value={l.periodUsageDurationUnit} />
          </div>
        </div>
      </fieldset>
      {disabled ? null : <Submit class="sm" label="Save limits" />}
    </form>
  );
};

export const SpendingLimits: FC<{ members: LimitTarget[]; teams: LimitTarget[]; admin: boolean }> = ({ members: ms, teams: ts, admin }) => (
  <section class="card" id="spending-limits" aria-labelledby="spending-limits-title">
    <h2 id="spending-limits-title">Spending limits of members and teams</h2>
    <p class="hint">
      A member's limits count the spend of every key they own; a team's apply to each of its members. Over a limit, the member's keys answer 401
      usage_limit_reached; analytics stay available.
    </p>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Member or team</th>
            <th scope="col">Limits</th>
          </tr>
        </thead>
        <tbody>
          {ms.map((m) => (
            <tr data-member-limits={m.id}>
              <td>{m.label}</td>
              <td>
                <LimitForm api={`/api/members/${m.id}/limits`} target={m} disabled={!admin} />
              </td>
            </tr>
          ))}
          {ts.map((t) => (
            <tr data-team-limits={t.id}>
              <td>team {t.label}</td>
              <td>
                <LimitForm api={`/api/teams/${t.id}/limits`} target={t} disabled={!admin} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  </section>
);

/** @jsxImportSource hono/jsx */
/**
 * The project's routing section (Organization page): its default `provider` preferences (what
 * requests that send none are routed by; owners and admins change them through
 * `PATCH /api/projects/{id}`), the hybrid fallback to the operator's keys, the regions its requests
 * were answered from, and the organization's residency; then provider health per caller continent
 * (uptime and time to first token as routing sees them from each continent).
 */
import type { FC } from "hono/jsx";
import type { ProviderPreferences } from "../../routing/preferences";
import type { ProjectMode } from "../../db/schema";
import { CONTINENTS } from "../../routing/regions";
import { providerLabel } from "../labels";
import { DataTable } from "../table";
import { Submit } from "../layout";
import { REGIONS_IN_USE_DAYS, type HealthRow, type RegionUse } from "./data";

export interface ProjectRoutingView {
  id: string;
  name: string;
  mode: ProjectMode;
  provider: ProviderPreferences | null;
  operatorKeyFallback: boolean;
}

const regionLabel = (region: string): string => region || "global";
const listValue = (xs: readonly string[] | undefined): string => (xs ?? []).join(", ");

const SORTS = [
  ["", "Smart (price, uptime, latency, throughput)"],
  ["price", "Lowest price"],
  ["latency", "Lowest time to first token"],
  ["throughput", "Highest throughput"],
] as const;

export const RoutingSection: FC<{ project: ProjectRoutingView; regions: RegionUse[]; residency: readonly string[]; admin: boolean }> = ({ project: p, regions, residency, admin }) => {
  const prefs = p.provider ?? {};
  return (
    <form class="card" data-api={`/api/projects/${p.id}`} data-method="PATCH" aria-labelledby={`routing-${p.id}`} data-success="Routing defaults saved.">
      <h2 id={`routing-${p.id}`}>{`Routing: ${p.name}`}</h2>
      <fieldset disabled={!admin}>
        <legend>Default preferences (requests that send no provider object)</legend>
        <div class="field">
          <label for={`rt-sort-${p.id}`}>Rank providers by</label>
          <select id={`rt-sort-${p.id}`} name="provider.sort">
            {SORTS.map(([value, label]) => (
              <option value={value} selected={(prefs.sort ?? "") === value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={`rt-order-${p.id}`}>Try first, in this order</label>
          <input id={`rt-order-${p.id}`} name="provider.order" data-type="list" value={listValue(prefs.order)} placeholder="e.g. openai, azure" />
        </div>
        <div class="field">
          <label for={`rt-only-${p.id}`}>Only these providers</label>
          <input id={`rt-only-${p.id}`} name="provider.only" data-type="list" value={listValue(prefs.only)} placeholder="empty: any" />
        </div>
        <div class="field">
          <label for={`rt-ignore-${p.id}`}>Never these providers</label>
          <input id={`rt-ignore-${p.id}`} name="provider.ignore" data-type="list" value={listValue(prefs.ignore)} />
        </div>
        <label class="check">
          <input type="checkbox" name="provider.allow_fallbacks" checked={prefs.allow_fallbacks !== false} />
          Fall back to other providers when these fail
        </label>
        <div class="field">
          <label for={`rt-data-${p.id}`}>Data use</label>
          <select id={`rt-data-${p.id}`} name="provider.data_collection">
            <option value="" selected={prefs.data_collection !== "deny"}>
              Any provider
            </option>
            <option value="deny" selected={prefs.data_collection === "deny"}>
              Only providers that do not train on API data
            </option>
          </select>
        </div>
        <p class="hint">Provider ids as in model ids (<code>openai</code>, <code>aws-bedrock</code>, ...), separated by commas. A request's own <code>provider</code> object replaces these; access rules and compliance still apply.</p>
      </fieldset>
      {p.mode === "hybrid" ? (
        <fieldset disabled={!admin}>
          <legend>Own provider keys</legend>
          <label class="check">
            <input type="checkbox" name="operatorKeyFallback" checked={p.operatorKeyFallback} />
            When every own key of a provider fails, use Switchboard's key (billed to credits)
          </label>
        </fieldset>
      ) : null}
      {admin ? (
        <>
          <Submit class="primary" label="Save routing" />
          {p.provider ? (
            <button class="sm" type="submit" data-only-json data-json='{"provider":null}'>
              Clear default preferences
            </button>
          ) : null}
        </>
      ) : (
        <p class="muted small">Only owners and admins change these settings.</p>
      )}
      <h3>{`Regions in use (last ${REGIONS_IN_USE_DAYS} days)`}</h3>
      <DataTable
        caption="Regions that answered this project's requests"
        head={["Provider", "Region", "Requests"]}
        rows={regions}
        cells={(r) => [providerLabel(r.provider), regionLabel(r.region), String(r.requests)]}
        empty="No requests answered in this period."
      />
      <h3>Residency</h3>
      <p class="small">
        {residency.length
          ? `The organization allows only endpoints in: ${residency.join(", ")} (every key; global endpoints excluded).`
          : "The organization sets no residency: any region may answer, unless a key's, member's or team's rule says otherwise."}
      </p>
    </form>
  );
};

const ms = (v: number | null): string => (v === null ? "—" : `${Math.round(v)}`);

/** Uptime and p50 / p95 time to first token per endpoint, one column per continent with callers. */
export const ProviderHealth: FC<{ rows: HealthRow[] }> = ({ rows }) => {
  const continents = CONTINENTS.filter((c) => rows.some((r) => r.byContinent[c]));
  return (
    <section class="card" aria-labelledby="health-title">
      <h2 id="health-title">Provider health by caller continent</h2>
      <p class="hint">The last 30 minutes as callers on each continent saw them: uptime, then p50 / p95 time to first token (ms; — below 10 answers). Routing ranks a caller's endpoints by its own continent's figures.</p>
      <DataTable
        caption="Provider health by caller continent"
        head={["Provider", "Region", ...continents]}
        rows={rows}
        cells={(r) => [
          providerLabel(r.provider),
          regionLabel(r.region),
          ...continents.map((c) => {
            const h = r.byContinent[c];
            return h ? `${(h.uptime * 100).toFixed(1)}% · ${ms(h.p50Ms)} / ${ms(h.p95Ms)}` : "—";
          }),
        ]}
        empty="No provider was called in the last 30 minutes."
      />
    </section>
  );
};

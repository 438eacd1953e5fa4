/** @jsxImportSource hono/jsx */
/**
 * The key editor: ONE form with one Save for everything a key's owner changes (name, expiry,
 * spending limits, alert threshold, rate limits). `key-editor.js` sends only the fields that differ
 * from what the page showed, in a single `PATCH /api/keys/{id}`, so changing two fields keeps both,
 * and says what changed (live under the form, then in the success message after the reload). The
 * three fields of a recurring limit travel together: the API checks them as one window.
 */
import type { FC } from "hono/jsx";
import type { KeyListItem } from "../../keys/view";
import { toDateTimeLocal } from "../format";
import { PeriodUnitSelect } from "./spending-limits";

export const ASSET_KEY_EDITOR = "/dashboard/assets/key-editor.js";

export type EditableKey = Pick<
  KeyListItem,
  "id" | "projectId" | "description" | "maskedKey" | "usageLimit" | "periodUsageLimit" | "periodUsageDurationValue" | "periodUsageDurationUnit" | "requestsPerMinute" | "tokensPerMinute" | "expired"
> & { expiresAtMs: number | null; alertThresholdPercent: number | null };

/** Rendered only for the key being edited (`?edit=`), as a full-width row under the key's row. */
export const KeyEditor: FC<{ k: EditableKey }> = ({ k }) => {
  const id = k.id;
  return (
    <tr class="edit-row">
      <td colspan={10} class="full">
        <section id="edit" class="editor" aria-labelledby="edit-title">
          <div class="page-head">
            <h3 id="edit-title">Edit “{k.description || k.maskedKey}”</h3>
            <a class="small" href={`?project=${encodeURIComponent(k.projectId)}`}>
              Close
            </a>
          </div>
          <form data-key-editor={`/api/keys/${id}`} aria-labelledby="edit-title" novalidate>
            <div class="grid">
              <fieldset>
                <legend>Name and expiry</legend>
                <div class="field">
                  <label for={`desc-${id}`}>Description</label>
                  <input id={`desc-${id}`} name="description" value={k.description} maxlength={256} data-label="Description" />
                </div>
                <div class="field">
                  <label for={`exp-${id}`}>Expires at (UTC)</label>
                  <input id={`exp-${id}`} name="expiresAt" type="datetime-local" data-type="datetime" data-empty="null" data-label="Expiry" value={toDateTimeLocal(k.expiresAtMs)} aria-describedby={`exp-hint-${id}`} />
                  <p class="hint" id={`exp-hint-${id}`}>
                    Empty: the key never expires.
                  </p>
                </div>
              </fieldset>
              <fieldset>
                <legend>Spending limits</legend>
                <div class="field">
                  <label for={`lim-${id}`}>All-time limit (USD)</label>
                  <input id={`lim-${id}`} name="usageLimit" value={k.usageLimit ?? ""} data-empty="null" data-label="All-time limit" inputmode="decimal" placeholder="no limit" />
                </div>
                <div class="row">
                  <div class="field">
                    <label for={`plim-${id}`}>Recurring limit (USD)</label>
                    <input id={`plim-${id}`} name="periodUsageLimit" value={k.periodUsageLimit ?? ""} data-empty="null" data-label="Recurring limit" data-group="period" inputmode="decimal" placeholder="no limit" />
                  </div>
                  <div class="field">
                    <label for={`pval-${id}`}>Window length</label>
                    <input id={`pval-${id}`} name="periodUsageDurationValue" type="number" min={1} data-type="int" data-empty="null" data-label="Window length" data-group="period" value={k.periodUsageDurationValue?.toString() ?? ""} placeholder="1" />
                  </div>
                  <div class="field">
                    <label for={`punit-${id}`}>Window unit</label>
                    <PeriodUnitSelect id={`punit-${id}`} value={k.periodUsageDurationUnit} />
                  </div>
                </div>
                <div class="field">
                  <label for={`thr-${id}`}>Alert threshold (%)</label>
                  <input id={`thr-${id}`} name="alertThresholdPercent" type="number" min={50} max={100} data-type="int" data-empty="null" data-label="Alert threshold" value={k.alertThresholdPercent?.toString() ?? ""} placeholder="organization's" aria-describedby={`thr-hint-${id}`} />
                  <p class="hint" id={`thr-hint-${id}`}>50 to 100 percent of this key's limits; empty uses the organization's threshold.</p>
                </div>
              </fieldset>
              <fieldset>
                <legend>Rate limits</legend>
                <div class="field">
                  <label for={`rpm-${id}`}>Requests per minute</label>
                  <input id={`rpm-${id}`} name="requestsPerMinute" type="number" min={1} data-type="int" data-empty="null" data-label="Requests per minute" value={k.requestsPerMinute?.toString() ?? ""} placeholder="organization's" />
                </div>
                <div class="field">
                  <label for={`tpm-${id}`}>Tokens per minute</label>
                  <input id={`tpm-${id}`} name="tokensPerMinute" type="number" min={1} data-type="int" data-empty="null" data-label="Tokens per minute" value={k.tokensPerMinute?.toString() ?? ""} placeholder="organization's" />
                </div>
                <p class="hint">This key's own rate limits, on top of the organization's; empty: only the organization's apply.</p>
              </fieldset>
            </div>
            <p class="notice small" data-changes aria-live="polite">
              No changes yet.
            </p>
            <p class="alert" role="alert" data-status></p>
            <div class="actions">
              <button class="primary" type="submit">
                Save changes
              </button>
              <a class="btn" href={`/dashboard/access?project=${encodeURIComponent(k.projectId)}&key=${encodeURIComponent(id)}`}>
                Access rules of this key
              </a>
            </div>
          </form>
          <script src={ASSET_KEY_EDITOR} defer></script>
        </section>
      </td>
    </tr>
  );
};

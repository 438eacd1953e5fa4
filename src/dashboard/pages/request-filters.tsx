/** @jsxImportSource hono/jsx */
/**
 * The Requests page's filters beyond key, model, provider and status: the app, the end user (a
 * platform end user or the body's `user`) and whether the prompt and answer were kept. Applied
 * server-side to the D1 window and to the R2 archive alike (src/usage/request-list.ts).
 */
import type { FC } from "hono/jsx";

export const MoreFilters: FC<{ q: { app?: string | undefined; user?: string | undefined; body?: string | undefined } }> = ({ q }) => (
  <>
    <div class="field">
      <label for="r-app">App</label>
      <input id="r-app" name="app" value={q.app ?? ""} placeholder="e.g. cursor" />
    </div>
    <div class="field">
      <label for="r-user">End user</label>
      <input id="r-user" name="user" value={q.user ?? ""} />
    </div>
    <div class="field">
      <label for="r-body">Prompt and answer</label>
      <select id="r-body" name="body">
        <option value="">Any</option>
        <option value="yes" selected={q.body === "yes"}>
          Kept
        </option>
        <option value="no" selected={q.body === "no"}>
          Not kept
        </option>
      </select>
    </div>
  </>
);

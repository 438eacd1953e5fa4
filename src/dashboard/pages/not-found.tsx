/** @jsxImportSource hono/jsx */
/** The dashboard's own 404 page (instead of the API's JSON error) for any unknown `/dashboard/...` path. */
import type { FC } from "hono/jsx";
import { Document } from "../layout";

export const NotFoundPage: FC<{ path: string }> = ({ path }) => (
  <Document title="Page not found">
    <main id="main">
      <div class="center-brand">
        <a class="brand" href="/dashboard">
          Switchboard
        </a>
      </div>
      <div class="card narrow">
        <h1>Page not found</h1>
        <p class="muted">
          There is no dashboard page at <code>{path}</code>.
        </p>
        <p class="actions">
          <a class="btn primary" href="/dashboard/keys">
            Go to the dashboard
          </a>
          <a class="btn" href="/docs">
            API docs
          </a>
        </p>
      </div>
    </main>
  </Document>
);

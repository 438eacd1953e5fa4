#!/usr/bin/env node
// @ts-check
/**
 * CPU cost of server-rendering the dashboard pages, without I/O: bundles the page components with
 * esbuild (Cloudflare-only imports stubbed), renders each page with a large data set many times in
 * this V8 and prints the median. `node bench/dashboard-render.mjs`
 */
import { build } from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
// Inside node_modules so the entry resolves the project's packages.
mkdirSync(join(root, "node_modules", ".cache"), { recursive: true });
const dir = mkdtempSync(join(root, "node_modules", ".cache", "swb-render-"));
const entry = join(dir, "entry.tsx");
writeFileSync(
  entry,
  `/** @jsxImportSource hono/jsx */
import { KeysPage } from "${root}/src/dashboard/pages/keys";
import { UsagePage } from "${root}/src/dashboard/pages/usage";
import { AccessPage } from "${root}/src/dashboard/pages/access";

const ctx = {
  session: { sessionId: "s", userId: "u", organizationId: "o", memberId: "m", role: "owner", email: "owner@example.com", name: "Owner", csrfToken: "c".repeat(32) },
  organization: { id: "o", name: "Acme", plan: "enterprise" },
  organizations: [{ id: "o", name: "Acme" }, { id: "o2", name: "Other" }],
  projects: [{ id: "p", name: "Default project", isDefault: true }],
  project: { id: "p", name: "Default project" },
  path: "/dashboard/keys",
};
const now = Date.now();
const keys = Array.from({ length: 50 }, (_, i) => ({
  id: "key_" + i, object: "api_key", description: "Key number " + i, projectId: "p", organizationId: "o", createdBy: "m",
  kind: i === 0 ? "playground" : "standard", status: i % 7 === 3 ? "inactive" : "active", maskedKey: "swb_AbCd…wxYz",
  expiresAt: i % 3 ? new Date(now + 86400000 * i).toISOString() : null, expired: false, lastRolledAt: null,
  usageLimit: i % 2 ? "25" : null, periodUsageLimit: i % 4 ? "5" : null, periodUsageDurationValue: i % 4 ? 1 : null, periodUsageDurationUnit: i % 4 ? "day" : null,
  createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString(),
  usage: "1.234567", periodUsage: "0.5", periodStartedAt: null, periodEndsAt: new Date(now + 3600000).toISOString(),
  creator: "owner@example.com", lastUsedAt: now, expiresAtMs: i % 3 ? now + 86400000 * i : null,
}));
const totals = (n) => ({ requests: n, errors: 1, cacheHits: 2, tokens: { prompt: n * 10, completion: n * 5, reasoning: 0, cached: 0, total: n * 15 }, costUsd: "0.0123", creditsCostUsd: "0.01", byokCostUsd: "0.0023", dataStorageCostUsd: "0" });
const day = 86400000;
const to = new Date(now).toISOString().slice(0, 10);
const fromMs = Date.parse(to) - 29 * day;
const scope = { type: "project", organizationId: "o", projectId: "p", projectName: "Default project", role: "owner", description: "All API keys of project 'Default project'" };
const report = {
  scope, period: { from: new Date(fromMs).toISOString().slice(0, 10), to, granularity: "day", timezone: "UTC" }, updatedAt: new Date(now).toISOString(),
  totals: totals(3000), series: Array.from({ length: 30 }, (_, i) => ({ start: new Date(fromMs + i * day).toISOString(), ...totals(100 + i) })),
  mostUsedProvider: null, mostUsedModel: null, mostUsedApp: null, appUsageCoverage: { complete: true, recordedRequests: 0, totalRequests: 0 }, note: "Usage statistics.",
};
const ranking = (groupBy) => ({ scope, period: report.period, groupBy, sortBy: "requests", updatedAt: null, totals: totals(3000), coverage: report.appUsageCoverage,
  rows: Array.from({ length: 8 }, (_, i) => ({ id: groupBy + i, name: groupBy + " " + i, rank: i + 1, ...totals(400 - i) })),
  pagination: { limit: 8, offset: 0, total: 8, hasMore: false, nextOffset: null }, note: "" });
const rules = Array.from({ length: 20 }, (_, i) => ({ id: "iam_" + i, object: "iam_rule", level: "key", targetId: "key_1", ruleType: "deny_models", ruleValue: { models: ["gpt-4o", "model-" + i] }, status: "active", createdAt: new Date(now).toISOString() }));
const access = { keys: keys.map((k) => ({ id: k.id, label: k.description })), members: [], teams: [], customProviders: ["acme"], target: { level: "key", id: "key_1", label: "Key number 1", editable: true }, rules };

export const pages = {
  "keys (50 keys)": () => String(<KeysPage ctx={ctx} keys={keys} thresholdPercent={80} alertsOn={true} />),
  "usage (30 days, 4 charts, 4 rankings)": () => String(<UsagePage ctx={ctx} q={{ granularity: "day" }} data={{ report, rankings: ["provider", "model", "app", "api_key"].map(ranking) }} />),
  "access (20 rules + catalogue)": () => String(<AccessPage ctx={ctx} data={access} />),
};
`,
);
const out = join(dir, "out.mjs");
await build({
  entryPoints: [entry],
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: out,
  jsx: "automatic",
  jsxImportSource: "hono/jsx",
  logLevel: "error",
  absWorkingDir: root,
  plugins: [
    {
      name: "cloudflare-stub",
      setup(b) {
        b.onResolve({ filter: /^cloudflare:/ }, (a) => ({ path: a.path, namespace: "stub" }));
        b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export class DurableObject {}; export class WorkerEntrypoint {}; export const env = {};" }));
      },
    },
  ],
});
const { pages } = await import(out);
for (const [name, render] of Object.entries(pages)) {
  for (let i = 0; i < 30; i++) render(); // warm up
  const times = [];
  let size = 0;
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    size = render().length;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${times[100].toFixed(2)} ms, p95 ${times[190].toFixed(2)} ms, ${(size / 1024).toFixed(0)} KB HTML`);
}
rmSync(dir, { recursive: true, force: true });

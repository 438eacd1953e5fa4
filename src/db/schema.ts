/**
 * D1 schema (drizzle). Migrations are generated from this file into migrations/ with
 * `npm run db:generate`. Conventions:
 * - ids are prefixed random strings (src/lib/ids.ts), timestamps are epoch milliseconds;
 * - money is an INTEGER count of pico-dollars (1e-12 USD, src/billing/money.ts) where SQL must add
 *   it up, and a decimal string where it is only configuration (limits);
 * - JSON columns hold small typed objects (mode: "json").
 *
 * One file per concept under ./schema/, re-exported here so drizzle-kit (drizzle.config.ts) and
 * every `import ... from "db/schema"` keep reading one module.
 */
export * from "./schema/columns";
export * from "./schema/organizations";
export * from "./schema/keys";
export * from "./schema/credits";
export * from "./schema/iam";
export * from "./schema/providers";
export * from "./schema/usage";
export * from "./schema/auth";
export * from "./schema/integrations";

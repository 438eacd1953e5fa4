import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Storage is isolated per test file; migrations are idempotent so this is safe in every file.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

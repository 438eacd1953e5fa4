import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll } from "vitest";

// Migrations are idempotent: this is safe in every file, whether its runtime is new or shared.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// In a runtime shared by several files, the batches a file's last requests opened (a body group
// and a queue batch close after 0.2 s, a settlement after SETTLE_BATCH_MS) are sent while the file
// still runs, not while the next one does. A precaution: the runs that hung without it also hung
// with it (docs/architecture.md, "Tests").
afterAll(() => new Promise((resolve) => setTimeout(resolve, 600)));

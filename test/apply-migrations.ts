import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll } from "vitest";

// Migrations are idempotent: this is safe in every file, whether its runtime is new or shared.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// A runtime shared by several files: the work a file's requests left running (a body group's
// send, a settlement batch, a queue batch) ends before the next file starts, so no file finds a
// batch whose owner is gone.
afterAll(() => new Promise((resolve) => setTimeout(resolve, 600)));

import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { PROVIDER_IDS } from "./src/catalog/types.ts";
import { TEST_SECRETS } from "./test/helpers/secrets.ts";
// Hermetic: a copy of wrangler.jsonc away from the developer's .dev.vars (see the module).
import { dropPoolTeardownNoise, hermeticWranglerConfig } from "./scripts/lib/hermetic.mjs";

dropPoolTeardownNoise(process.stdout);
dropPoolTeardownNoise(process.stderr);

const providerEnvPrefix = (id: string) => id.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * The bindings of the `latency` project (test/latency/): the app as a caller far from the
 * key's objects and the D1 primary sees it (src/durable-objects/debug-latency.ts,
 * src/lib/debug-world.ts). Every budget-object call (KeyState, OrgCredits, RateLimiter) waits
 * DO_LATENCY_MS in the object; through the Worker's fetch handler every D1 statement on the primary
 * waits D1_PRIMARY_LATENCY_MS, a read replica's D1_REPLICA_LATENCY_MS, KV KV_LATENCY_MS.
 */
export const LATENCY_BINDINGS = {
  DO_LATENCY_MS: "120",
  D1_PRIMARY_LATENCY_MS: "60",
  D1_REPLICA_LATENCY_MS: "5",
  KV_LATENCY_MS: "5",
};

const LATENCY_TESTS = "test/latency/**/*.test.ts";

/**
 * The modules' own tests that touch no binding (no `cloudflare:` import): they share one runtime
 * instead of starting one per file, which is most of a small file's time. A test that reads or
 * writes storage keeps a runtime, and so storage, of its own.
 */
const PURE_MODULE_TESTS = readdirSync("src", { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => `src/${f}`)
  .filter((f) => !/from "cloudflare:/.test(readFileSync(f, "utf8")));

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  /** One workerd project: the app with every provider on the fake upstream, plus `extra` bindings. */
  const project = (name: string, include: string[], exclude: string[], extra: Record<string, string>, isolate = true) => ({
    plugins: [
      cloudflareTest(({ inject }) => {
        // Every provider points at the fake upstream (test/fake-upstream), one path prefix each.
        const upstream = `http://127.0.0.1:${inject("fakeUpstreamPort")}`;
        const providerVars: Record<string, string> = {};
        for (const id of PROVIDER_IDS) {
          providerVars[`${providerEnvPrefix(id)}_BASE_URL`] = `${upstream}/${id}`;
          providerVars[`${providerEnvPrefix(id)}_API_KEY`] = `test-operator-key-${id}`;
        }
        // Vertex service-account keys are exchanged for tokens here instead of at Google.
        providerVars.GOOGLE_VERTEX_TOKEN_URL = `${upstream}/google-oauth/token`;
        return {
          wrangler: { configPath: hermeticWranglerConfig(import.meta.dirname) },
          miniflare: {
            bindings: {
              ...providerVars,
              ...TEST_SECRETS,
              ENVIRONMENT: "test",
              LOG_FLUSH_MS: "50",
              // The tests' records span hours: they are written against the code's 24-hour dedup
              // horizon, not the 1 hour wrangler.jsonc sets for D1's size (docs/scale.md).
              LOG_DEDUP_HOURS: "24",
              SETTLE_BATCH_MS: "50",
              // Retries of outbound deliveries within a test's patience (production: 10 s doubling).
              DELIVERY_RETRY_BASE_SECONDS: "0",
              FAKE_UPSTREAM_URL: upstream,
              TEST_MIGRATIONS: migrations,
              ...extra,
            },
            // The LOGS consumer without wrangler.jsonc's 5 s batch wait: records reach D1 within
            // a fifth of a second, as the tests' polls of request_logs expect.
            queueConsumers: {
              "switchboard-logs": { maxBatchSize: 100, maxBatchTimeout: 0.2, maxRetries: 10, retryDelay: 0, deadLetterQueue: "switchboard-logs-dlq" },
              "switchboard-deliveries": { maxBatchSize: 50, maxBatchTimeout: 0.2, maxRetries: 20, retryDelay: 0 },
            },
          },
        };
      }),
    ],
    // The suite runs with the bench instruments compiled in (metering counts object calls, the
    // latency project slows the objects down); a deployed bundle is built without them.
    define: { __BENCH_INSTRUMENTS__: "true" },
    test: {
      name,
      isolate,
      globalSetup: ["./test/global-setup.ts"],
      setupFiles: ["./test/apply-migrations.ts"],
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      testTimeout: 20_000,
      hookTimeout: 30_000,
    },
  });
  return {
    test: {
      // Vitest's default on 2 cores is one file at a time; a file spends much of its time waiting
      // (its own workerd starting, queue and log polls), so two at once nearly halve the suite's
      // wall time on such a machine. The tests assert orders and counts, not wall-clock bounds.
      maxWorkers: Math.max(2, availableParallelism() - 1),
      projects: [
        project("units", PURE_MODULE_TESTS, [], {}, false),
        project("workers", ["src/**/*.test.ts", "test/**/*.test.ts"], [LATENCY_TESTS, ...PURE_MODULE_TESTS], {}),
        // The admission invariants with the objects and the D1 primary far away (docs/admission.md).
        project("latency", [LATENCY_TESTS], [], LATENCY_BINDINGS),
      ],
    },
  };
});

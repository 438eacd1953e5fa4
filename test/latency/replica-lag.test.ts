/**
 * Under latency: request-path key reads go to a nearby D1 read replica (5 ms here)
 * and the primary is far (test/latency/helpers.ts). The replica here lags for real: its key table is
 * a copy taken before the change on the primary, read through the Sessions API
 * (`first-unconstrained`). A key created (or re-enabled) on the primary a moment ago is admitted
 * after the primary's lookup (one far round trip: the key's batch); a key disabled, rolled or
 * deleted on the primary is refused though the replica still shows it live; a key the replica has
 * pays no far read at all (`x-gateway-path-calls`, src/lib/debug-world.ts).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import type { Env } from "../../src/env";
import { addKey, seedOrg } from "../helpers/fixtures";
import { clearKeyCache } from "../../src/auth/key-cache";
import { worldEnv } from "../../src/lib/debug-world";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { updateKey } from "../../src/keys/update";
import { rollKey } from "../../src/keys/roll";
import { deleteKey } from "../../src/keys/delete";
import { chatVia, far, latencies, recorded, say } from "./helpers";

/** Takes the replica's copy of the key table now: later writes on the primary are not in it. */
async function replicaSnapshot(): Promise<void> {
  await env.DB.prepare("DROP TABLE IF EXISTS api_keys_replica").run();
  await env.DB.prepare("CREATE TABLE api_keys_replica AS SELECT * FROM api_keys").run();
}

afterEach(async () => {
  await env.DB.prepare("DROP TABLE IF EXISTS api_keys_replica").run();
});

/**
 * The app's env with a lagging replica under the world latencies and path tracing: reads in a
 * `first-unconstrained` session see `api_keys_replica`, everything else the primary.
 */
function laggingEnv(): { env: Env; replicaReads: () => number } {
  let reads = 0;
  const lagging = (session: D1DatabaseSession): D1DatabaseSession =>
    ({
      prepare: (sql: string) => {
        reads++;
        return session.prepare(sql.replaceAll('"api_keys"', '"api_keys_replica"'));
      },
      batch: <T,>(stmts: D1PreparedStatement[]) => session.batch<T>(stmts),
      getBookmark: () => session.getBookmark(),
    }) as unknown as D1DatabaseSession;
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "withSession") return (c?: string) => (c === "first-unconstrained" ? lagging(target.withSession(c)) : target.withSession(c));
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const e = worldEnv(Object.create(env, { DB: { value: db, enumerable: true }, DEBUG_PATH_CALLS: { value: "1", enumerable: true } }) as Env);
  return { env: e, replicaReads: () => reads };
}

/** A cold isolate's request (no cached key context), early call in flight behind a slow first token. */
async function coldRequest(e: Env, token: string, ttft: number, tag = "replica"): Promise<{ status: number; body: string; pathCalls: string | null }> {
  clearKeyCache();
  const { res, done } = chatVia(token, { stream: true, ...say(`replica [[fake:ttft=${ttft}]] [[tag:${tag}]]`) }, { env: e });
  const r = await res;
  const body = await r.text();
  await done;
  return { status: r.status, body, pathCalls: r.headers.get("x-gateway-path-calls") };
}

const farCalls = (h: string | null): number => Number(/far=(\d+)/.exec(h ?? "")?.[1] ?? NaN);

describe("keys read through a lagging replica, the primary far away", () => {
  it("a key created on the primary a moment ago is admitted: the replica misses, the primary's lookup is the only far read on the path", async () => {
    const lat = latencies();
    const org = await seedOrg();
    await replicaSnapshot();
    const { token } = await addKey(org);
    const lag = laggingEnv();
    const fresh = await coldRequest(lag.env, token, 3 * lat.object + 200);
    expect(lag.replicaReads()).toBeGreaterThan(0);
    expect(fresh.status).toBe(200);
    expect(fresh.body).toContain("data: [DONE]");
    // The primary's lookup on the path (the key's one batch: one far round trip), not a refusal.
    expect(farCalls(fresh.pathCalls)).toBe(1);

    // Once the replica has it: no far read before the first byte (the objects hide behind the first token).
    await replicaSnapshot();
    const caughtUp = await coldRequest(laggingEnv().env, token, 3 * lat.object + 200);
    expect(caughtUp.status).toBe(200);
    expect(farCalls(caughtUp.pathCalls)).toBe(0);
  });

  it("a key re-enabled on the primary while the replica still shows it disabled is admitted", async () => {
    const lat = latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    await updateKey(far, row, { status: "inactive" });
    await replicaSnapshot();
    const current = (await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get())!;
    await updateKey(far, current, { status: "active" });
    const lag = laggingEnv();
    const r = await coldRequest(lag.env, token, lat.object + 100);
    expect(lag.replicaReads()).toBeGreaterThan(0);
    expect(r.status).toBe(200);
  });

  it.each([
    { change: "disabled", code: "key_disabled" },
    { change: "rolled", code: "key_rolled" },
    { change: "deleted", code: "key_deleted" },
  ])("a key $change on the primary while the replica still shows it live is refused, and nothing of the request reaches the upstream", async ({ change, code }) => {
    latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    await replicaSnapshot();
    if (change === "disabled") await updateKey(far, row, { status: "inactive" });
    else if (change === "rolled") await rollKey(far, row);
    else await deleteKey(far, row);
    const lag = laggingEnv();
    const tag = crypto.randomUUID();
    const r = await coldRequest(lag.env, token, 0, tag);
    expect(lag.replicaReads()).toBeGreaterThan(0);
    // A replica's row confirms no rules (src/context/policy-freshness.ts): no early call starts under
    // it, and the key's object refused the request before any upstream call.
    expect(await recorded(tag)).toBe(0);
    expect(r.status).toBe(401);
    expect(r.body).not.toContain("data:");
    expect((JSON.parse(r.body) as { error: { code: string } }).error.code).toBe(code);
  });
});

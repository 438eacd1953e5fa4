/**
 * Request-path reads of a key go to a nearby D1 read replica (Sessions API,
 * `first-unconstrained`); a miss there is asked of the primary before any 401, so replication lag
 * never refuses a valid key (src/auth/gateway-key.ts).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { addKey, seedOrg } from "../helpers/fixtures";
import { clearKeyCache } from "../../src/auth/key-cache";

function chatVia(e: Env, key: string, content: string): { res: Promise<Response>; done: Promise<void> } {
  const ctx = createExecutionContext();
  const res = Promise.resolve(
    app.fetch(
      new Request("http://gw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
        body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content }] }),
      }),
      e,
      ctx,
    ),
  );
  return { res, done: res.then(() => waitOnExecutionContext(ctx)).catch(() => undefined) };
}

describe("keys read near the caller (D1 read replicas)", () => {
  it("a key created on the primary and read through a lagging replica is still admitted", async () => {
    const org = await seedOrg();
    // The replica: a copy of the key table taken before the key exists.
    await env.DB.prepare("DROP TABLE IF EXISTS api_keys_replica").run();
    await env.DB.prepare("CREATE TABLE api_keys_replica AS SELECT * FROM api_keys").run();
    const { token } = await addKey(org);
    let replicaReads = 0;
    const lagging = (session: D1DatabaseSession): D1DatabaseSession => {
      const behind = (sql: string) => sql.replaceAll('"api_keys"', '"api_keys_replica"');
      return {
        prepare: (sql: string) => {
          replicaReads++;
          return session.prepare(behind(sql));
        },
        batch: <T,>(stmts: D1PreparedStatement[]) => session.batch<T>(stmts),
        getBookmark: () => session.getBookmark(),
      } as unknown as D1DatabaseSession;
    };
    const db = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "withSession") {
          return (c?: string) => (c === "first-unconstrained" ? lagging(target.withSession(c)) : target.withSession(c));
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    clearKeyCache();
    const { res, done } = chatVia(Object.create(env, { DB: { value: db } }) as Env, token, "fresh key");
    const r = await res;
    await r.text();
    await done;
    expect(replicaReads).toBeGreaterThan(0);
    expect(r.status).toBe(200);
    await env.DB.prepare("DROP TABLE api_keys_replica").run();
  });
});

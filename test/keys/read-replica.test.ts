/**
 * Request-path key reads go through a D1 read replica (Sessions API,
 * `first-unconstrained`), and anything the replica's answer would refuse is re-read on the
 * primary (`first-primary`) first, so replication lag never refuses a valid key; liveness stays
 * with the key's KeyState object, so a stale replica row never keeps a rolled or disabled key alive.
 *
 * The replica is a stand-in around the real D1 binding: until `freeze()` it reads the primary and
 * remembers every answer; from then on it has stopped replicating: a statement it served before
 * gets the same answer (the rows as they were), any other gets no rows (rows written after the
 * freeze, e.g. a key created a moment ago elsewhere). `down` makes every replica round trip
 * fail (its region unreachable). Every round trip is counted per site.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { addKey, rejection, seedOrg } from "../helpers/fixtures";
import { admitKey, authenticateGatewayKey, checkKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { createRule, deleteRule } from "../../src/iam/rules";
import { pathCallsHeader, worldEnv } from "../../src/lib/debug-world";
import { clearKeyCache } from "../../src/auth/key-cache";
import { rollKey } from "../../src/keys/roll";
import { updateKey } from "../../src/keys/update";
import { bumpKeyVersions } from "../../src/keys/sync";
import { getKeyRow } from "../../src/keys/lookup";
import { getDb } from "../../src/db/client";
import { app } from "../../src/app";
import type { Env } from "../../src/env";

const NO_ROWS = { results: [], success: true, meta: {} } as unknown as D1Result;

class LaggingReplica {
  /** Round trips (a statement or a batch) that reached each site. */
  calls = { replica: 0, primary: 0 };
  /** The replica's region is unreachable: every replica round trip fails. */
  down = false;
  private frozen = false;
  private readonly seen = new Map<string, unknown>();

  constructor(private readonly real: D1Database) {}

  /** The replica stops applying the primary's writes: it answers as of now. */
  freeze(): void {
    this.frozen = true;
  }

  /** An env whose DB is this stand-in (everything else is the test's own bindings). */
  env(): Env {
    return Object.create(env, { DB: { value: this.binding(), enumerable: true } }) as Env;
  }

  private binding(): D1Database {
    const primary = (s: D1Database | D1DatabaseSession) => this.primarySite(s);
    const db = {
      ...primary(this.real),
      withSession: (constraint?: string): D1DatabaseSession => {
        const session = this.real.withSession(constraint);
        const site = constraint === "first-unconstrained" ? this.replicaSite(session) : primary(session);
        return Object.assign(site, { getBookmark: () => session.getBookmark() }) as unknown as D1DatabaseSession;
      },
    };
    return db as unknown as D1Database;
  }

  private primarySite(real: D1Database | D1DatabaseSession) {
    const counted = (stmt: D1PreparedStatement): D1PreparedStatement =>
      ({
        bind: (...v: unknown[]) => counted(stmt.bind(...v)),
        all: () => (this.calls.primary++, stmt.all()),
        first: (col?: string) => (this.calls.primary++, col === undefined ? stmt.first() : stmt.first(col)),
        run: () => (this.calls.primary++, stmt.run()),
        raw: (opts?: { columnNames?: boolean }) => (this.calls.primary++, opts?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw()),
        real: stmt,
      }) as unknown as D1PreparedStatement;
    return {
      prepare: (sql: string) => counted(real.prepare(sql)),
      batch: (stmts: D1PreparedStatement[]) => (this.calls.primary++, real.batch(stmts.map(unwrap))),
    };
  }

  private replicaSite(real: D1DatabaseSession) {
    const served = async <T>(key: string, read: () => Promise<T>, none: T): Promise<T> => {
      this.calls.replica++;
      if (this.down) throw new Error("D1_ERROR: replica unreachable");
      if (this.frozen) return this.seen.has(key) ? (this.seen.get(key) as T) : none;
      const out = await read();
      this.seen.set(key, out);
      return out;
    };
    const stmtOf = (sql: string, params: unknown[], stmt: D1PreparedStatement): D1PreparedStatement =>
      ({
        bind: (...v: unknown[]) => stmtOf(sql, v, stmt.bind(...v)),
        all: () => served(`all ${keyOf(sql, params)}`, () => stmt.all(), NO_ROWS),
        raw: (opts?: { columnNames?: boolean }) =>
          served(`raw ${JSON.stringify(opts ?? {})} ${keyOf(sql, params)}`, () => (opts?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw()), [] as unknown[]),
        first: () => Promise.reject(new Error("not used by the request path")),
        run: () => Promise.reject(new Error("a write on a replica session goes to the primary")),
        key: keyOf(sql, params),
        real: stmt,
      }) as unknown as D1PreparedStatement;
    return {
      prepare: (sql: string) => stmtOf(sql, [], real.prepare(sql)),
      batch: (stmts: D1PreparedStatement[]) =>
        served(
          `batch ${stmts.map((s) => (s as unknown as { key: string }).key).join("\n")}`,
          () => real.batch(stmts.map(unwrap)),
          stmts.map(() => NO_ROWS),
        ),
    };
  }
}

const keyOf = (sql: string, params: unknown[]): string => `${sql} ${JSON.stringify(params)}`;
const unwrap = (s: D1PreparedStatement): D1PreparedStatement => (s as unknown as { real?: D1PreparedStatement }).real ?? s;

afterEach(() => clearKeyCache());

describe("D1 read replicas on the request path", () => {
  it("a key known to the replica is read there alone: the primary is not consulted", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    const ctx = await resolveGatewayKey(near, org.key);
    expect(ctx.key.id).toBe(org.keyId);
    expect((await admitKey(near, ctx, 0n)).context.key.id).toBe(org.keyId);
    expect(replica.calls.replica).toBeGreaterThan(0);
    expect(replica.calls.primary).toBe(0);
  });

  it("a key created on the primary and read through a lagging replica is admitted (the miss is re-read on the primary)", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    replica.freeze(); // the replica stops before the key exists
    const created = await addKey(org, { description: "created a moment ago elsewhere" });
    const near = replica.env();

    const ctx = await resolveGatewayKey(near, created.token);
    expect(ctx.key.id).toBe(created.row.id);
    const admitted = await admitKey(near, ctx, 0n);
    expect(admitted.context.key.id).toBe(created.row.id);
    expect(admitted.reservationId).toBeTruthy();
    // One replica read that found nothing, then the whole lookup on the primary.
    expect(replica.calls.replica).toBeGreaterThan(0);
    expect(replica.calls.primary).toBeGreaterThan(0);

    // The same through the HTTP front door: 200, not 401.
    clearKeyCache();
    const ec = createExecutionContext();
    const res = await app.fetch(new Request("http://gw.test/v1/models", { headers: { authorization: `Bearer ${created.token}` } }), near, ec);
    await waitOnExecutionContext(ec);
    expect(res.status).toBe(200);
  });

  it("a key that does not exist anywhere is still 401 invalid_api_key, after one primary read", async () => {
    const replica = new LaggingReplica(env.DB);
    replica.freeze();
    expect(await rejection(resolveGatewayKey(replica.env(), `swb_${"b".repeat(40)}`))).toMatchObject({ status: 401, code: "invalid_api_key" });
    expect(replica.calls.primary).toBeGreaterThan(0);
  });

  it("a replica that cannot answer costs a primary read, not the request", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    replica.down = true;
    const near = replica.env();
    const ctx = await resolveGatewayKey(near, org.key);
    expect((await admitKey(near, ctx, 0n)).context.key.id).toBe(org.keyId);
    expect(replica.calls.replica).toBeGreaterThan(0);
    expect(replica.calls.primary).toBeGreaterThan(0);
  });

  it("a rolled key's old secret is refused at once although the replica still has the old row; the new secret is admitted", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    await resolveGatewayKey(near, org.key); // the replica has served the key's row
    clearKeyCache();
    replica.freeze();
    const rolled = await rollKey(env, await getKeyRow(getDb(env.DB), org.orgId, org.keyId));

    // The replica still answers with the old row (old secret, old version, active) ...
    const stale = await resolveGatewayKey(near, org.key);
    expect(stale.key.version).toBeLessThan(rolled.row.version);
    expect(replica.calls.primary).toBe(0);
    // ... and the key's object refuses it: a replica read proves existence, never liveness.
    expect(await rejection(admitKey(near, stale, 0n))).toMatchObject({ status: 401, code: "key_rolled" });
    expect(await rejection(checkKey(near, stale))).toMatchObject({ status: 401, code: "key_rolled" });

    const fresh = await resolveGatewayKey(near, rolled.token); // a replica miss, found on the primary
    expect((await admitKey(near, fresh, 0n)).context.key.id).toBe(org.keyId);
  });

  it("a key disabled a moment ago is refused at once although the replica still has it active", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    await resolveGatewayKey(near, org.key);
    clearKeyCache();
    replica.freeze();
    await updateKey(env, await getKeyRow(getDb(env.DB), org.orgId, org.keyId), { status: "inactive" });

    const stale = await resolveGatewayKey(near, org.key);
    expect(stale.key.status).toBe("active");
    expect(await rejection(admitKey(near, stale, 0n))).toMatchObject({ status: 401, code: "key_disabled" });
  });

  it("a key re-enabled a moment ago is admitted although the replica still has it disabled", async () => {
    const org = await seedOrg();
    const { row, token } = await addKey(org, { description: "re-enabled" });
    const disabled = await updateKey(env, row, { status: "inactive" });
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    expect(await rejection(resolveGatewayKey(near, token))).toMatchObject({ status: 401, code: "key_disabled" });
    replica.freeze(); // the replica has the disabled row
    await updateKey(env, disabled, { status: "active" });
    const before = replica.calls.primary;

    const ctx = await resolveGatewayKey(near, token);
    expect(ctx.key.status).toBe("active");
    expect((await admitKey(near, ctx, 0n)).context.key.id).toBe(row.id);
    expect(replica.calls.primary).toBeGreaterThan(before);
  });

  it("a newer version reported by the key's object is reloaded from the primary when the replica has not caught up", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    const ctx = await resolveGatewayKey(near, org.key);
    replica.freeze();
    await bumpKeyVersions(env, { keyId: org.keyId }); // e.g. an IAM rule changed
    expect(replica.calls.primary).toBe(0);

    const reloaded = await checkKey(near, ctx, { spending: true });
    expect(reloaded.key.version).toBe(ctx.key.version + 1);
    expect(replica.calls.primary).toBeGreaterThan(0);
  });

  it("a deny rule removed a moment ago no longer refuses, although the replica (or the cache) still has it", async () => {
    const org = await seedOrg();
    const target = { organizationId: org.orgId, level: "key" as const, targetId: org.keyId };
    const rule = await createRule(env, target, { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["10.66.0.0/16"] } });
    const replica = new LaggingReplica(env.DB);
    const near = replica.env();
    const from = { secret: org.key, clientIp: "10.66.1.2" };
    expect(await rejection(authenticateGatewayKey(near, from))).toMatchObject({ status: 403, code: "permission_denied" });
    replica.freeze(); // the replica keeps the deny rule
    await deleteRule(env, target, rule.id);

    const ctx = await authenticateGatewayKey(near, from);
    expect(ctx.rules.key).toHaveLength(0);
    expect((await admitKey(near, ctx, 0n)).context.key.id).toBe(org.keyId);
  });

  it("the world-latency bench counts a cold key load as one replica read (near), none on the primary (far)", async () => {
    const org = await seedOrg();
    const traced = worldEnv(Object.create(env, { DEBUG_PATH_CALLS: { value: "1", enumerable: true } }) as Env);
    await resolveGatewayKey(traced, org.key);
    // Two sequential replica reads before (the key with its project and member, then its rules,
    // provider keys and models): near=2. One batch keyed by the fingerprint now.
    expect(pathCallsHeader(traced)).toMatch(/^far=0;near=1;/);
  });

  it("a cold key costs one replica round trip, a miss one more on the primary; the context is the one the primary has", async () => {
    const org = await seedOrg();
    const replica = new LaggingReplica(env.DB);
    const ctx = await resolveGatewayKey(replica.env(), org.key);
    expect(replica.calls).toEqual({ replica: 1, primary: 0 });
    clearKeyCache();
    const onPrimary = await resolveGatewayKey(env, org.key);
    expect({ ...ctx, loadedAt: 0 }).toEqual({ ...onPrimary, loadedAt: 0 });

    replica.freeze();
    const created = await addKey(org, { description: "not replicated yet" });
    const before = { ...replica.calls };
    expect((await resolveGatewayKey(replica.env(), created.token)).key.id).toBe(created.row.id);
    expect(replica.calls).toEqual({ replica: before.replica + 1, primary: before.primary + 1 });
  });

  it("a cold key's chat request through the front door waits for one near call (the key's batch) and its objects, then no far call while its rules are fresh", async () => {
    const org = await seedOrg();
    clearKeyCache();
    const traced = worldEnv(Object.create(env, { DEBUG_PATH_CALLS: { value: "1", enumerable: true } }) as Env);
    const ec = createExecutionContext();
    const res = await app.fetch(
      new Request("http://gw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", "x-no-cache": "true" },
        body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, stream: true, messages: [{ role: "user", content: "cold [[fake:ttft=300]]" }] }),
      }),
      traced,
      ec,
    );
    await res.text();
    await waitOnExecutionContext(ec);
    expect(res.status).toBe(200);
    // A replica's row confirms no rules (src/context/policy-freshness.ts): the upstream call waits for
    // the objects' answer (the key's, the credits' and the rate window's, asked together).
    expect(res.headers.get("x-gateway-path-calls")).toMatch(/^far=[1-9]\d*;near=1;/);
    // The next request, its lease ended but its rules confirmed a moment ago, starts upstream at once.
    await new Promise((r) => setTimeout(r, 1_200));
    const ec2 = createExecutionContext();
    const next = await app.fetch(
      new Request("http://gw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", "x-no-cache": "true" },
        body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, stream: true, messages: [{ role: "user", content: "warm [[fake:ttft=300]]" }] }),
      }),
      worldEnv(Object.create(env, { DEBUG_PATH_CALLS: { value: "1", enumerable: true } }) as Env),
      ec2,
    );
    await next.text();
    await waitOnExecutionContext(ec2);
    expect(next.headers.get("x-gateway-path-calls")).toMatch(/^far=0;near=0;/);
    // Where the time went (the world bench's breakdown): every step, in order, from the Worker's start.
    const timing = Object.fromEntries((res.headers.get("x-gateway-path-timing") ?? "").split(";").map((kv) => [kv.split("=")[0], Number(kv.split("=")[1])]));
    expect(Object.keys(timing)).toEqual(expect.arrayContaining(["at", "key", "exec", "early", "up", "admitted", "credits", "first", "release"]));
    expect(Math.abs(timing.at! - Date.now())).toBeLessThan(60_000);
    expect(timing.key).toBeLessThanOrEqual(timing.exec!);
    expect(timing.exec).toBeLessThanOrEqual(timing.up!);
    // The fake upstream's first token came 300 ms after the call; the headers went out with it.
    expect(timing.first! - timing.up!).toBeGreaterThanOrEqual(290);
    expect(timing.release).toBeGreaterThanOrEqual(timing.first!);
  });
});

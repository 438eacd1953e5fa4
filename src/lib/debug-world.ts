/**
 * World-latency instrumentation (`npm run bench -- --world`, tests), inert unless configured and
 * never in production. It gives every binding on the request path the latency it has for a caller
 * far from the primary region, and traces which remote calls a request waited for:
 *  - D1_PRIMARY_LATENCY_MS: every D1 statement or batch on the primary (the binding itself, a
 *    `first-primary` session, and writes in any session) waits this long first;
 *  - D1_REPLICA_LATENCY_MS: reads in a `first-unconstrained` session (a nearby read replica);
 *  - KV_LATENCY_MS: every KV call (the response cache);
 *  - the budget objects wait DO_LATENCY_MS themselves (src/durable-objects/debug-latency.ts);
 *  - DEBUG_PATH_CALLS=1: responses carry `x-gateway-path-calls: far=N;near=M;cancelled=C`,
 *    the remote calls (far: Durable Object, D1 primary; near: D1 replica, KV) that sat on the path
 *    to the response, and the early upstream calls this isolate cancelled after a refusal so far;
 *    and `x-gateway-path-timing` (`pathTimingHeader`), when each step of the request happened.
 *
 * Production code does not import this module: the Worker's fetch entry calls `worldEnv` and
 * src/routes/middleware/instruments.ts (once per request) hands the pipeline its probe
 * (`probeOf`, src/lib/probe.ts) and stamps the headers on the answer.
 *
 * A call "sat on the path" when it ended before the response was released and either before the
 * upstream call started (the upstream waited for it) or after the upstream's first byte (the
 * response waited for it). A call that ran entirely while the upstream was working on its first
 * token is hidden behind it, and a background call still running at release is not counted.
 */
import type { Env } from "../env";
import { envVar, isProduction } from "../env";
import { silentProbe, type RequestProbe } from "./probe";

type Kind = "do" | "d1-primary" | "d1-replica" | "kv";

interface Trace {
  /** When the request reached the Worker. */
  t0: number;
  /** Named moments of the request (the probe's `mark`), in the order they happened. */
  marks: Array<[string, number]>;
  calls: Array<{ kind: Kind; start: number; end: number }>;
  upstreamStart: number | null;
  upstreamFirst: number | null;
}

interface WorldConfig {
  primaryMs: number;
  replicaMs: number;
  kvMs: number;
  trace: boolean;
}

const configs = new WeakMap<object, WorldConfig | null>();
const traces = new WeakMap<object, Trace>();

const ms = (env: Env, name: string): number => {
  const v = Number(envVar(env, name));
  return Number.isFinite(v) && v > 0 ? v : 0;
};

function configOf(env: Env): WorldConfig | null {
  let c = configs.get(env);
  if (c === undefined) {
    c = null;
    if (!isProduction(env)) {
      const cfg: WorldConfig = {
        primaryMs: ms(env, "D1_PRIMARY_LATENCY_MS"),
        replicaMs: ms(env, "D1_REPLICA_LATENCY_MS"),
        kvMs: ms(env, "KV_LATENCY_MS"),
        trace: envVar(env, "DEBUG_PATH_CALLS") === "1",
      };
      if (cfg.primaryMs || cfg.replicaMs || cfg.kvMs || cfg.trace) c = cfg;
    }
    configs.set(env, c);
  }
  return c;
}

const sleep = (n: number): Promise<void> => (n > 0 ? new Promise((r) => setTimeout(r, n)) : Promise.resolve());

async function timed<T>(trace: Trace | null, kind: Kind, delay: number, run: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    await sleep(delay);
    return await run();
  } finally {
    trace?.calls.push({ kind, start, end: Date.now() });
  }
}

const WRITE = /^\s*(insert|update|delete|replace|create|drop|alter)\b/i;

/** Where a session's statements go: a replica for reads when unconstrained, else the primary. */
type Site = "primary" | "replica";

const realStatements = new WeakMap<object, D1PreparedStatement>();

class SlowStatement {
  constructor(
    private readonly real: D1PreparedStatement,
    readonly kind: Kind,
    private readonly delay: number,
    private readonly trace: Trace | null,
  ) {
    realStatements.set(this, real);
  }
  bind(...values: unknown[]): D1PreparedStatement {
    return new SlowStatement(this.real.bind(...values), this.kind, this.delay, this.trace) as unknown as D1PreparedStatement;
  }
  first(col?: string): Promise<unknown> {
    return timed(this.trace, this.kind, this.delay, () => (col === undefined ? this.real.first() : this.real.first(col)));
  }
  run(): Promise<D1Result> {
    return timed(this.trace, this.kind, this.delay, () => this.real.run());
  }
  all(): Promise<D1Result> {
    return timed(this.trace, this.kind, this.delay, () => this.real.all());
  }
  raw(options?: { columnNames?: boolean }): Promise<unknown[]> {
    return timed(this.trace, this.kind, this.delay, () => (options?.columnNames ? this.real.raw({ columnNames: true }) : this.real.raw()));
  }
}

function slowDb(real: D1Database | D1DatabaseSession, site: Site, cfg: WorldConfig, trace: Trace | null): D1Database {
  const kindOf = (sql: string): Kind => (site === "replica" && !WRITE.test(sql) ? "d1-replica" : "d1-primary");
  const delayOf = (k: Kind): number => (k === "d1-replica" ? cfg.replicaMs : cfg.primaryMs);
  const unwrap = (s: D1PreparedStatement): D1PreparedStatement => realStatements.get(s) ?? s;
  const db = {
    prepare(sql: string): D1PreparedStatement {
      const k = kindOf(sql);
      return new SlowStatement(real.prepare(sql), k, delayOf(k), trace) as unknown as D1PreparedStatement;
    },
    batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
      // A batch is one round trip; it is a read only when every statement in it is.
      const kinds = statements.map((s) => (s instanceof SlowStatement ? s.kind : "d1-primary"));
      const k: Kind = kinds.every((x) => x === "d1-replica") ? "d1-replica" : "d1-primary";
      return timed(trace, k, delayOf(k), () => real.batch<T>(statements.map(unwrap)));
    },
    exec(sql: string): Promise<D1ExecResult> {
      if (!("exec" in real)) throw new Error("exec is not available on a D1 session");
      return timed(trace, "d1-primary", cfg.primaryMs, () => real.exec(sql));
    },
    withSession(constraint?: string): D1DatabaseSession {
      const session = "withSession" in real ? real.withSession(constraint) : real;
      const s = constraint === "first-unconstrained" ? "replica" : "primary";
      const wrapped = slowDb(session, s, cfg, trace);
      return Object.assign(wrapped, { getBookmark: () => ("getBookmark" in session ? session.getBookmark() : null) }) as unknown as D1DatabaseSession;
    },
    dump(): Promise<ArrayBuffer> {
      throw new Error("dump is not supported");
    },
  };
  return db as unknown as D1Database;
}

function slowKv(real: KVNamespace, cfg: WorldConfig, trace: Trace | null): KVNamespace {
  return new Proxy(real, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => timed(trace, "kv", cfg.kvMs, () => fn.apply(target, args));
    },
  });
}

/**
 * A Durable Object namespace whose stubs run every RPC call through `around` (the call itself is
 * made as a method of the stub: an RPC method must not be re-bound). Tests use it to put an object
 * far away from the caller's side.
 */
export function namespaceAround<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  around: (call: () => Promise<unknown>) => Promise<unknown>,
): DurableObjectNamespace<T> {
  const stubOf = (stub: DurableObjectStub<T>): DurableObjectStub<T> =>
    new Proxy(stub, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        const methods = target as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        return (...args: unknown[]) => around(() => methods[prop]!(...args));
      },
    });
  return new Proxy(ns, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop === "get" || prop === "getByName") return (...args: unknown[]) => stubOf(fn.apply(target, args) as DurableObjectStub<T>);
      return (...args: unknown[]) => fn.apply(target, args);
    },
  });
}

/** A Durable Object namespace whose stubs record the time of every call (the latency is the object's own). */
const tracedNamespace = <T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>, trace: Trace): DurableObjectNamespace<T> =>
  namespaceAround(ns, (call) => timed(trace, "do", 0, call));

/**
 * The env a request runs with: `env` itself unless world latency or path tracing is configured,
 * else a per-request copy whose D1, KV and budget-object bindings are slowed down and traced.
 */
export function worldEnv(env: Env): Env {
  const cfg = configOf(env);
  if (!cfg) return env;
  const trace: Trace | null = cfg.trace ? { t0: Date.now(), marks: [], calls: [], upstreamStart: null, upstreamFirst: null } : null;
  const props: PropertyDescriptorMap = {
    DB: { value: slowDb(env.DB, "primary", cfg, trace), enumerable: true },
    CACHE: { value: slowKv(env.CACHE, cfg, trace), enumerable: true },
  };
  if (trace) {
    props.KEY_STATE = { value: tracedNamespace(env.KEY_STATE, trace), enumerable: true };
    props.ORG_CREDITS = { value: tracedNamespace(env.ORG_CREDITS, trace), enumerable: true };
    props.RATE_LIMITER = { value: tracedNamespace(env.RATE_LIMITER, trace), enumerable: true };
  }
  const out = Object.create(env, props) as Env;
  configs.set(out, cfg);
  if (trace) traces.set(out, trace);
  return out;
}

/** The probe of a request run with `worldEnv`'s env: it records into the request's trace. */
export function probeOf(env: Env): RequestProbe {
  const t = traces.get(env);
  if (!t) return silentProbe;
  return {
    mark: (name) => {
      if (!t.marks.some(([n]) => n === name)) t.marks.push([name, Date.now()]);
    },
    upstreamStart: () => {
      if (t.upstreamStart === null) t.upstreamStart = Date.now();
    },
    upstreamFirst: () => {
      if (t.upstreamFirst === null) t.upstreamFirst = Date.now();
    },
  };
}

/** Whether `env` is a traced request's env (its responses carry the path headers). */
export const isTraced = (env: Env): boolean => traces.has(env);

/**
 * `x-gateway-path-timing` of a traced request: ms since it reached the Worker of each mark, of
 * the upstream call's start (`up`) and first byte (`first`), and of now (`release`: the answer's
 * headers), e.g. `at=1764030000000;key=0;exec=1;up=1;admitted=2;first=402;release=402`
 * (`at`: the epoch ms the Worker got the request). Clock: the Worker's
 * `Date.now()`, which advances with I/O (CPU time between two I/O events shows as none).
 */
export function pathTimingHeader(env: Env, now = Date.now()): string | null {
  const t = traces.get(env);
  if (!t) return null;
  const out: Array<[string, number]> = [...t.marks];
  if (t.upstreamStart !== null) out.push(["up", t.upstreamStart]);
  if (t.upstreamFirst !== null) out.push(["first", t.upstreamFirst]);
  out.push(["release", now]);
  const steps = out.sort((a, b) => a[1] - b[1]).map(([n, at]) => `${n}=${at - t.t0}`);
  // The wall clock when the Worker got the request: the bench (same machine) splits its own
  // TTFB into before the Worker, in it, and after it.
  return [`at=${t.t0}`, ...steps].join(";");
}

/**
 * `far=N;near=M;cancelled=C` for a traced request (see the module comment), else null.
 * `cancelled`: the early upstream calls this isolate cancelled after a refusal so far (the
 * early-call module counts them; the caller passes the count in).
 */
export function pathCallsHeader(env: Env, now = Date.now(), cancelled = 0): string | null {
  const t = traces.get(env);
  if (!t) return null;
  let far = 0;
  let near = 0;
  for (const c of t.calls) {
    if (c.end > now) continue;
    const before = t.upstreamStart === null || c.end <= t.upstreamStart;
    const after = t.upstreamFirst !== null && c.end > t.upstreamFirst;
    if (!before && !after) continue;
    if (c.kind === "do" || c.kind === "d1-primary") far++;
    else near++;
  }
  return `far=${far};near=${near};cancelled=${cancelled}`;
}

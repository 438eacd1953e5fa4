/**
 * Load correctness: 32 concurrent clients hammer
 * `POST /v1/chat/completions` (half streamed) for a bounded time. Checked:
 *  - no request is lost: every response is a 200 with a complete body, or a deliberate error;
 *  - every response has its request_logs row, and `metadata.log_id` names it;
 *  - the key's spend in its KeyState DO equals the sum of its logged costs exactly (bigint);
 *  - an admin action (disable, roll, IAM rule) applies to every request started after the admin
 *    call returned.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, master, nextArrival, parseSse, resetMetrics, settledSpend, sleep, waitForLogs, type Json } from "./helpers";

const CLIENTS = 32;
const AFTER_ADMIN_MS = 1500;
const HARD_STOP_MS = 45_000;
const MIN_PER_CLIENT = 2;
const MODEL = "llama-3.3-70b-instruct";

interface Outcome {
  client: number;
  startedAt: number;
  endedAt: number;
  stream: boolean;
  status: number;
  requestId: string | null;
  logId: string | null;
  costPico: bigint | null;
  errorCode: string | null;
  complete: boolean;
}

let org: SeededOrg;
/** Dashboard session of the owner (signed in up front: sign-in is deliberately slow). */
const session = { cookie: "", csrf: "" };
beforeAll(async () => {
  org = await seedOrg({ creditsUsd: 1000 });
  await resetMetrics();
  const signIn = await call("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email: org.ownerEmail, password: org.ownerPassword }) });
  session.csrf = ((await signIn.json()) as Json).csrfToken as string;
  session.cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
});

async function oneRequest(key: string, client: number, n: number): Promise<Outcome> {
  const stream = (client + n) % 2 === 0;
  const words = 1 + ((client * 7 + n * 3) % 20);
  const startedAt = Date.now();
  const res = await chat(key, {
    model: MODEL,
    messages: [{ role: "user", content: `client ${client} request ${n} [[fake:words=${words}]]` }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const out: Outcome = { client, startedAt, endedAt: 0, stream, status: res.status, requestId: res.headers.get("x-request-id"), logId: null, costPico: null, errorCode: null, complete: false };
  const text = await res.text();
  out.endedAt = Date.now();
  if (res.status !== 200) {
    out.errorCode = (JSON.parse(text) as Json).error?.code ?? null;
    return out;
  }
  if (stream) {
    const events = parseSse(text);
    const final = events.at(-2);
    out.complete = events.at(-1) === "[DONE]" && typeof final === "object" && final.usage !== undefined && final.error === undefined;
    if (typeof final === "object") {
      out.logId = final.metadata?.log_id ?? null;
      if (typeof final.usage?.cost === "number") out.costPico = BigInt(Math.round(final.usage.cost * 1e12));
    }
    const content = events
      .filter((e): e is Json => e !== "[DONE]" && Array.isArray(e.choices))
      .map((e) => (e.choices as Json[]).map((c) => c.delta?.content ?? "").join(""))
      .join("");
    out.complete &&= content.trim().split(" ").length === words;
  } else {
    const body = JSON.parse(text) as Json;
    out.logId = body.metadata?.log_id ?? null;
    out.costPico = BigInt(Math.round(body.usage.cost * 1e12));
    out.complete = (body.choices[0].message.content as string).split(" ").length === words;
  }
  return out;
}

/**
 * Runs CLIENTS concurrent request loops for `durationMs`, and on until every client has made
 * MIN_PER_CLIENT requests (a loaded machine, or a second test worker, stretches each request).
 * `admin` (if any) runs `adminAfterMs` into the run; the time its call returned is reported.
 */
async function runLoad(key: string, durationMs: number, admin?: { afterMs: number; action: () => Promise<void> }): Promise<{ outcomes: Outcome[]; adminDoneAt: number | null }> {
  const until = Date.now() + durationMs;
  const outcomes: Outcome[] = [];
  let adminDoneAt: number | null = null;
  // With an admin action, the load goes on after the admin call returned (it competes with 32
  // busy clients, so it may take a while) for AFTER_ADMIN_MS and until CLIENTS / 2 requests have
  // started since, at most HARD_STOP_MS in all: a slow machine still tests what came after.
  const hardStop = Date.now() + HARD_STOP_MS;
  let startedAfterAdmin = 0;
  const afterAdminPending = () =>
    adminDoneAt === null || Date.now() < adminDoneAt + AFTER_ADMIN_MS || startedAfterAdmin < CLIENTS / 2;
  const running = () => Date.now() < hardStop && (Date.now() < until || (admin !== undefined && afterAdminPending()));
  const loops = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let n = 0; (n < MIN_PER_CLIENT && Date.now() < hardStop) || running(); n++) {
      await nextArrival();
      if (adminDoneAt !== null && Date.now() > adminDoneAt) startedAfterAdmin++;
      outcomes.push(await oneRequest(key, client, n));
    }
  });
  const adminRun = admin
    ? (async () => {
        await new Promise((r) => setTimeout(r, admin.afterMs));
        await admin.action();
        adminDoneAt = Date.now();
      })()
    : Promise.resolve();
  await Promise.all([...loops, adminRun]);
  return { outcomes, adminDoneAt };
}

/**
 * Every outcome has its log row (by request id, with the log id the response reported). A 401
 * may be decided before the key is known to be live (authentication, not a request of the key),
 * so only a row that exists is checked for those.
 */
async function expectLogged(outcomes: Outcome[]): Promise<void> {
  const ids = outcomes.map((o) => o.requestId);
  expect(ids.every((id): id is string => typeof id === "string")).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  const mustLog = outcomes.filter((o) => o.status !== 401);
  const rows = await waitForLogs(mustLog.map((o) => o.requestId!));
  const extra = await waitForLogs(outcomes.filter((o) => o.status === 401).map((o) => o.requestId!), 0);
  const byRequest = new Map([...rows, ...extra].map((r) => [r.requestId, r]));
  const missing = mustLog.filter((o) => !byRequest.has(o.requestId!));
  expect(missing.map((o) => `${o.requestId} (${o.status}, stream=${o.stream})`)).toEqual([]);
  for (const o of outcomes) {
    const row = byRequest.get(o.requestId!);
    if (!row) continue;
    expect(row.statusCode).toBe(o.status);
    if (o.status === 200) {
      expect(row.id).toBe(o.logId);
      expect(BigInt(row.costPico)).toBe(o.costPico);
    } else {
      expect(row.costPico).toBe(0);
    }
  }
}

describe("32 concurrent clients", { timeout: 90_000 }, () => {
  it("let a timer in a Durable Object fire while they keep calling it", async () => {
    // An admin change returns once the key's object has waited out its leases on a timer; the
    // clients below must not hold that timer back until they stop (see nextArrival).
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("load-timer"));
    await stub.ping();
    let fired = false;
    const timer = runInDurableObject(stub, () => sleep(300)).then(() => (fired = true));
    const cap = 10_000;
    let calls = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (!fired && calls < cap) {
          await nextArrival();
          calls++;
          await stub.ping();
        }
      }),
    );
    await timer;
    expect(calls, "the timer fired only after the clients stopped").toBeLessThan(cap);
  });

  it("lose nothing, log everything and bill exactly", async () => {
    const k = await addKey(org, { description: "load" });
    const { outcomes } = await runLoad(k.token, 2000);
    expect(outcomes.length).toBeGreaterThanOrEqual(CLIENTS * MIN_PER_CLIENT);
    expect(outcomes.filter((o) => o.stream).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => !o.stream).length).toBeGreaterThan(0);
    const bad = outcomes.filter((o) => o.status !== 200 || !o.complete);
    expect(bad.map((o) => `${o.requestId}: ${o.status} ${o.errorCode ?? ""} complete=${o.complete}`)).toEqual([]);
    await expectLogged(outcomes);
    const { usage, logged, rows } = await settledSpend(k.row.id, 10_000);
    expect(rows).toHaveLength(outcomes.length);
    expect(usage).toBe(logged);
    expect(logged).toBe(outcomes.reduce((s, o) => s + (o.costPico ?? 0n), 0n));
    expect(usage).toBeGreaterThan(0n);
  });

  it.each([
    {
      name: "disabling the key (master API)",
      denied: [401],
      action: (keyId: string) => master(org.masterKey, "PATCH", `/keys/${keyId}`, { status: "inactive" }),
    },
    {
      name: "an IAM rule denying the model (master API)",
      denied: [403],
      action: (keyId: string) => master(org.masterKey, "POST", `/keys/${keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: [MODEL] } }),
    },
    {
      name: "rolling the key (dashboard)",
      denied: [401],
      action: (keyId: string) => call(`/api/keys/${keyId}/roll`, { method: "POST", headers: { cookie: session.cookie, "x-csrf-token": session.csrf } }),
    },
  ])("$name applies to every request started after it returned", async ({ denied, action }) => {
    const k = await addKey(org, { description: "admin under load" });
    const { outcomes, adminDoneAt } = await runLoad(k.token, 1200, {
      afterMs: 400,
      action: async () => {
        const res = await action(k.row.id);
        expect(res.status, await res.clone().text()).toBeLessThan(300);
      },
    });
    expect(adminDoneAt).not.toBeNull();
    const before = outcomes.filter((o) => o.startedAt < adminDoneAt!);
    const after = outcomes.filter((o) => o.startedAt > adminDoneAt!);
    expect(before.filter((o) => o.status === 200).length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThanOrEqual(CLIENTS / 4);
    const leaked = after.filter((o) => !denied.includes(o.status));
    expect(leaked.map((o) => `${o.requestId} started ${o.startedAt - adminDoneAt!} ms after: ${o.status}`)).toEqual([]);
    // Nothing else went wrong: successes are complete, errors are the deliberate denial.
    const other = outcomes.filter((o) => (o.status === 200 && !o.complete) || (o.status !== 200 && !denied.includes(o.status)));
    expect(other.map((o) => `${o.requestId}: ${o.status} ${o.errorCode}`)).toEqual([]);
    await expectLogged(outcomes);
    const { usage, logged } = await settledSpend(k.row.id, 10_000);
    expect(usage).toBe(logged);
  });
});

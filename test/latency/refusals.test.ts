/**
 * A refused request is answered with the same status, error envelope and
 * headers whether its key's objects and the D1 primary are far away (early upstream call in flight
 * and cancelled) or near (no injected latency), for every refusal of the admission path: a
 * disabled, rolled or deleted key (401), a key at its limit (401), an organization out of credits
 * (402), a budget held by reservations past the wait bound (429 budget_busy) and a rate limit (429).
 * The far side's upstream answers before admission does (`ttft=0`, a dripping stream), so the
 * cancelled call has produced events by then: none of them reaches the client.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import type { Env } from "../../src/env";
import { addKey, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { orgCreditsStub } from "../../src/durable-objects/org-credits";
import { rateCounterStub } from "../../src/durable-objects/rate-limiter";
import { admitKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { updateKey } from "../../src/keys/update";
import { rollKey } from "../../src/keys/roll";
import { deleteKey } from "../../src/keys/delete";
import { cancelledEarlyCalls } from "../../src/billing/early-call";
import { cacheContext, getCachedContext } from "../../src/auth/key-cache";
import { keyLogs, settledSpend, sleep } from "../resilience/helpers";
import { chatVia, far, latencies, recorded, say } from "./helpers";

type Kind = "disabled" | "rolled" | "deleted" | "limit" | "credits" | "budget_busy" | "rate";

/** The env without injected latency (the suite's own) for a budget or rate object's instance. */
const NO_LATENCY = Object.create(env, { DO_LATENCY_MS: { value: "0", enumerable: true } }) as Env;

/** Takes the injected latency off the objects of `org` and its key: the "near" side. */
async function objectsNear(org: SeededOrg, keyId: string): Promise<void> {
  const stubs = [keyStateStub(env, keyId), orgCreditsStub(env, org.orgId), rateCounterStub(env, `rate:org:${org.orgId}`), rateCounterStub(env, `rate:key:${keyId}`)];
  for (const stub of stubs) {
    await runInDurableObject(stub as DurableObjectStub, (instance: object) => {
      Object.defineProperty(instance, "env", { value: NO_LATENCY, configurable: true, writable: true });
    });
  }
}

interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  raw: string;
}

/** Headers that differ between any two answers (the request's id, the clock; the Worker's own time, which the far side's latency changes). */
const VOLATILE = new Set(["x-request-id", "date", "x-ratelimit-reset", "x-gateway-overhead-ms"]);

/** Brings a fresh key into the refusal `kind` and sends the refused request under `e`. */
async function refusal(kind: Kind, side: "far" | "near", tag: string): Promise<{ answer: Answer; keyId: string }> {
  const e = side === "far" ? far : env;
  const org = await seedOrg(kind === "credits" ? { creditsUsd: 0.000001 } : {});
  const { token, row } = await addKey(org, {
    ...(kind === "limit" ? { usageLimit: "0.000001" } : {}),
    ...(kind === "budget_busy" ? { usageLimit: "0.00001" } : {}),
    ...(kind === "rate" ? { requestsPerMinute: 1 } : {}),
  });
  if (side === "near") await objectsNear(org, row.id);
  // Warm: the isolate knows the key (cached context), a lease where the budget allows one.
  if (kind !== "budget_busy") {
    const warm = chatVia(token, { stream: true, ...say("warm") }, { env: e });
    const r = await warm.res;
    expect(r.status).toBe(200);
    await r.text();
    await warm.done;
  }
  let requestEnv = e;
  const current = async () => (await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get())!;
  // The change is made by another isolate: this one keeps the key's context it cached (a roll or
  // delete evicts it only in the isolate that made the change).
  const fingerprint = (await resolveGatewayKey(e, token)).key.fingerprint;
  const cached = getCachedContext(fingerprint)!;
  if (kind === "disabled") await updateKey(e, await current(), { status: "inactive" });
  if (kind === "rolled") await rollKey(e, await current());
  if (kind === "deleted") await deleteKey(e, await current());
  if (kind !== "budget_busy") cacheContext(fingerprint, cached);
  if (kind === "limit") await settledSpend(row.id, 5_000);
  if (kind === "credits") {
    await settledSpend(row.id, 5_000);
    for (let i = 0; i < 100 && (await keyStateStub(env, row.id).outboxSize()) > 0; i++) await sleep(25);
  }
  if (kind === "budget_busy") {
    // The whole budget held by one reservation that is never settled here.
    await admitKey(e, await resolveGatewayKey(e, token), 20_000_000n);
    requestEnv = Object.create(e, { ADMISSION_WAIT_MS: { value: "200", enumerable: true } }) as Env;
  }
  const sent = chatVia(token, { stream: true, ...say(`refused [[fake:words=30,drip=5]] [[tag:${tag}]]`) }, { env: requestEnv });
  const r = await sent.res;
  const raw = await r.text();
  await sent.done;
  const headers: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    if (!VOLATILE.has(k)) headers[k] = v;
  });
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // compared as text
  }
  return { answer: { status: r.status, body, headers, raw }, keyId: row.id };
}

/**
 * An answer without what depends on the moment: the seconds left in the rate window (a rate
 * limit's Retry-After and message) and, but for the rate limit itself, the requests left in it
 * (what this isolate knows of the UTC minute; a request on either side of a minute's end counts
 * in another window).
 */
function timeless(a: Answer, kind: Kind): Answer {
  const headers = { ...a.headers };
  expect(Number(headers["x-ratelimit-remaining"])).toBeGreaterThanOrEqual(0);
  if (kind !== "rate") headers["x-ratelimit-remaining"] = "N";
  if (kind === "rate" && "retry-after" in headers) headers["retry-after"] = "N";
  return { ...a, raw: "", headers, body: JSON.parse(JSON.stringify(a.body).replace(/retry in \d+ s/g, "retry in N s")) as unknown };
}

const EXPECTED: Record<Kind, { status: number; code: string }> = {
  disabled: { status: 401, code: "key_disabled" },
  rolled: { status: 401, code: "key_rolled" },
  deleted: { status: 401, code: "key_deleted" },
  limit: { status: 401, code: "usage_limit_reached" },
  credits: { status: 402, code: "insufficient_credits" },
  budget_busy: { status: 429, code: "budget_busy" },
  rate: { status: 429, code: "rate_limit_exceeded" },
};

describe("a refusal under latency is answered exactly as without it", () => {
  it.each(Object.keys(EXPECTED) as Kind[])("%s", async (kind) => {
    latencies();
    // A rate window is the UTC minute: both sides' two requests within the same one.
    if (kind === "rate" && Date.now() % 60_000 > 55_000) await sleep(60_000 - (Date.now() % 60_000) + 50);
    const tag = crypto.randomUUID();
    const cancelledBefore = cancelledEarlyCalls();
    const [near, farSide] = await Promise.all([refusal(kind, "near", `${tag}-near`), refusal(kind, "far", `${tag}-far`)]);
    const expected = EXPECTED[kind];
    expect(near.answer.status).toBe(expected.status);
    expect((near.answer.body as { error: { code: string } }).error.code).toBe(expected.code);
    expect(timeless(farSide.answer, kind)).toEqual(timeless(near.answer, kind));
    // The far request's early call went upstream and produced a stream before admission refused;
    // not a byte of it reached the client, and it is logged as cancelled at cost 0.
    expect(await recorded(`${tag}-far`)).toBe(1);
    expect(farSide.answer.raw).not.toContain("data:");
    expect(cancelledEarlyCalls() - cancelledBefore).toBeGreaterThanOrEqual(1);
    let rows = await keyLogs(farSide.keyId);
    const cancelledRows = () => rows.filter((l) => l.routing.some((a) => a.error_type === "early_cancelled"));
    for (let i = 0; i < 100 && cancelledRows().length === 0; i++) {
      await sleep(50);
      rows = await keyLogs(farSide.keyId);
    }
    expect(cancelledRows()).toHaveLength(1);
    expect(cancelledRows()[0]!.statusCode).toBe(expected.status);
    expect(cancelledRows()[0]!.costPico).toBe(0);
  });
});

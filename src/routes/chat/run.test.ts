/**
 * A finished request hands its settlement (the durable record and the follow-ups that wait for it)
 * to the runtime in one waitUntil: each call costs the runtime about as much CPU as the
 * settlement's own JS. The record is still durable by the time that one promise settles.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../../../test/helpers/fixtures";
import { resolveGatewayKey } from "../../auth/gateway-key";
import { keyStateStub } from "../../durable-objects/key-state";
import { newId } from "../../lib/ids";
import { silentProbe } from "../../lib/probe";
import { baseLog, finishRequest, newRun, type ChatExecutionInput } from "./run";

describe("finishRequest", () => {
  it("an admitted request's settlement is one waitUntil, and its record is stored when it settles", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const handed: Promise<unknown>[] = [];
    const input: ChatExecutionInput = { env, waitUntil: (p) => void handed.push(p), auth, requestId: newId("req"), sourceApp: "unknown", clientIp: null, headers: new Headers(), body: {}, probe: silentProbe };
    const run = { ...newRun(input, "gpt-4o-mini"), admitted: true };
    finishRequest(run, { ...baseLog(run), statusCode: 200, costPico: 1_000n, creditsCostPico: 1_000n }, { totalPico: 1_000n, creditsPico: 1_000n });
    expect(handed).toHaveLength(1);
    await Promise.all(handed);
    expect((await keyStateStub(env, org.keyId).getSpend()).usage).toBe(1_000n);
  });
});

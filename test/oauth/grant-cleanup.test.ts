/**
 * OAuth grants do not pile up: the daily cron deletes those expired or revoked more than a day ago.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { oauthGrants } from "../../src/db/schema";
import { resolveAccessToken } from "../../src/oauth/tokens";
import worker from "../../src/index";
import { authorize, pkce, publicClient, token, type TokenResponse } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("grant cleanup", () => {
  it("the daily cron deletes grants expired or revoked more than a day ago, keeping live ones", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    const t = (await (await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId })).json()) as TokenResponse;
    const count = async () => (await getDb(env.DB).select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId))).length;
    expect(await count()).toBe(3); // used code + access + refresh

    const ctrl = (cron: string, at: number) => createScheduledController({ scheduledTime: at, cron });
    // Every-minute cron: no cleanup.
    const minute = createExecutionContext();
    worker.scheduled(ctrl("* * * * *", Date.now() + 2 * 86_400_000), env, minute);
    await waitOnExecutionContext(minute);
    expect(await count()).toBe(3);
    // Two days later the used code and the expired access token go; the refresh token (30 days) stays.
    const ectx = createExecutionContext();
    worker.scheduled(ctrl("17 3 * * *", Date.now() + 2 * 86_400_000), env, ectx);
    await waitOnExecutionContext(ectx);
    expect(await count()).toBe(1);
    expect(await resolveAccessToken(env, t.access_token)).toBeNull();
    expect((await token({ grant_type: "refresh_token", refresh_token: t.refresh_token!, client_id: clientId })).status).toBe(200);
  });
});


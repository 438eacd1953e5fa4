/**
 * An early upstream call (src/billing/early-call.ts) exists to hide the budget objects' round trip
 * behind the provider's work. A request admitted from this isolate's lease makes no round trip, so
 * it starts none: its first attempt goes out once admission answered, a few microtasks later.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { seedOrg } from "../helpers/fixtures";
import { startedEarlyCalls } from "../../src/billing/early-call";

const contexts: ExecutionContext[] = [];

/** A chat request; its background work is awaited at the end (a lease lasts about a second). */
async function chat(key: string): Promise<Response> {
  const ctx = createExecutionContext();
  contexts.push(ctx);
  const res = await app.fetch(
    new Request("http://gw.test/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: `hi ${crypto.randomUUID()}` }] }),
    }),
    env as Env,
    ctx,
  );
  await res.text();
  return res;
}

describe("early calls under a lease", () => {
  it("requests admitted from the isolate's lease start no early call", async () => {
    const org = await seedOrg();
    // The first request asks the key's object (and may start an early call meanwhile); its answer
    // leaves this isolate a lease.
    expect((await chat(org.key)).status).toBe(200);
    const before = startedEarlyCalls();
    for (let i = 0; i < 5; i++) expect((await chat(org.key)).status).toBe(200);
    expect(startedEarlyCalls() - before).toBe(0);
    await Promise.all(contexts.map((c) => waitOnExecutionContext(c)));
  });
});

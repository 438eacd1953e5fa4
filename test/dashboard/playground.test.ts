/**
 * The dashboard playground: its page, and its chat door, which runs as the project's playground key
 * through the /v1 pipeline (rules, billing, request log), streaming or not, for signed-in members only.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../helpers/fixtures";
import { readSse, user, waitForLog } from "../chat/helpers";
import { signIn, type Session } from "./session";

const DOOR = "/api/playground/chat/completions";

function post(s: Session | null, body: unknown, opts: { csrf?: boolean; project?: string } = {}): Promise<Response> {
  const headers = new Headers({ "content-type": "application/json" });
  if (s) headers.set("cookie", s.cookie);
  if (s && opts.csrf !== false) headers.set("x-csrf-token", s.csrf);
  return call(`${DOOR}${opts.project ? `?project=${opts.project}` : ""}`, { method: "POST", headers, body: JSON.stringify(body) });
}

describe("dashboard playground", () => {
  it("answers as the playground key: cost and routing in the answer, the request logged under that key and the Playground app", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const page = await (await call("/dashboard/playground", { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    expect(page).toContain('id="pg-model"');
    expect(page).toContain(`data-playground="${DOOR}?project=${org.projectId}"`);
    expect(page).toContain("/dashboard/assets/playground.js");

    const res = await post(owner, { model: "gpt-4o-mini", messages: [{ role: "system", content: "Be brief." }, ...user("hello playground")], temperature: 0.2, max_tokens: 50 }, { project: org.projectId });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; usage: { cost: number }; metadata: { used_provider: string; routing: unknown[]; log_id: string } };
    expect(body.choices[0]!.message.content).toContain("Hello from openai");
    expect(body.usage.cost).toBeGreaterThan(0);
    expect(body.metadata.used_provider).toBe("openai");
    expect(body.metadata.routing.length).toBeGreaterThan(0);
    const row = await waitForLog(res.headers.get("x-request-id")!);
    expect(row.apiKeyId).toBe(org.playgroundKeyId);
    expect(row.sourceApp).toBe("playground");
  });

  it("streams, with the usage chunk that carries cost and routing", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await post(owner, { model: "gpt-4o-mini", messages: user("stream please"), stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events } = await readSse(res);
    const last = events.filter((e): e is Record<string, unknown> => e !== "[DONE]").at(-1) as { usage?: { cost: number }; metadata?: { routing: unknown[] } };
    expect(last.usage?.cost).toBeGreaterThan(0);
    expect(last.metadata?.routing.length).toBeGreaterThan(0);
  });

  it("applies the playground key's rules: a denied model answers the rule's 403 message", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const rule = await call(`/v1/master/keys/${org.playgroundKeyId}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } }) });
    expect(rule.status).toBe(201);
    const res = await post(owner, { model: "gpt-4o-mini", messages: user("denied?") });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("Access denied: model 'gpt-4o-mini' is denied (deny_models), by an IAM rule on this API key.");
  });

  it("needs a session and its CSRF token; bad input gets the error envelope", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    expect((await post(null, { model: "gpt-4o-mini", messages: user("x") })).status).toBe(401);
    expect((await post(owner, { model: "gpt-4o-mini", messages: user("x") }, { csrf: false })).status).toBe(403);
    const bad = await post(owner, { model: "gpt-4o-mini", messages: "not a list" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBeTruthy();
    expect((await post(owner, { model: "gpt-4o-mini", messages: user("x") }, { project: "bad id!" })).status).toBe(400);
  });
});

/**
 * OpenTelemetry export: spans decoded by a test receiver and checked against the GenAI semantic
 * conventions; a collector that is down, then up, still gets every request exactly once; the
 * last delivery's outcome is visible; the endpoint passes the outbound-address guard; header
 * values are never shown again.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user, waitForLog } from "../chat/helpers";
import { checkUpstreamUrl } from "../../src/lib/ssrf";
import { signIn } from "../dashboard/session";

type Json = Record<string, any>;
interface Received { path: string; headers: Record<string, string>; body: string; status: number }

const receiver = (name: string) => `${env.FAKE_UPSTREAM_URL}/receiver/${name}`;
const received = async (name: string): Promise<Received[]> => (await (await fetch(receiver(name))).json()) as Received[];

async function enableExport(o: SeededOrg, endpoint: string, headers?: Record<string, string>): Promise<Response> {
  return call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: { otlpEndpoint: endpoint, ...(headers ? { otlpHeaders: headers } : {}) } }) });
}

/** Every span the receiver accepted (status 200), flattened. */
async function spans(name: string): Promise<Json[]> {
  return (await received(name))
    .filter((r) => r.status === 200)
    .flatMap((r) => (JSON.parse(r.body) as Json).resourceSpans.flatMap((rs: Json) => rs.scopeSpans.flatMap((ss: Json) => ss.spans)));
}

const attrs = (span: Json): Record<string, unknown> =>
  Object.fromEntries(span.attributes.map((a: Json) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.doubleValue ?? a.value.boolValue]));

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("OpenTelemetry export", () => {
  it("sends one span per request with the GenAI conventions, request id and cost", async () => {
    const o = await seedOrg();
    const name = `otlp-${crypto.randomUUID().slice(0, 8)}`;
    const res = await enableExport(o, receiver(name), { "x-honeycomb-team": "team-secret-value" });
    expect(res.status).toBe(200);
    const shown = JSON.stringify(await res.json());
    expect(shown).not.toContain("team-secret-value");
    expect(shown).toContain("x-honeycomb-team");

    const r = await chat(o.key, { model: "gpt-4o-mini", messages: user("trace me please") });
    const requestId = r.headers.get("x-request-id")!;
    const row = await waitForLog(requestId);
    const got = await until(() => spans(name), (s) => s.length >= 1);
    expect(got).toHaveLength(1);
    const [span] = got;
    expect(span!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span!.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(BigInt(span!.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span!.startTimeUnixNano));
    const a = attrs(span!);
    expect(a).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.response.model": row.usedModel,
      "gen_ai.usage.input_tokens": String(row.promptTokens),
      "gen_ai.usage.output_tokens": String(row.completionTokens),
      "switchboard.request_id": requestId,
    });
    expect(a["switchboard.cost_usd"]).toBeCloseTo(row.costPico / 1e12, 12);
    // The conventions type finish reasons as string[]: an array value, not a string.
    const reasons = span!.attributes.find((x: Json) => x.key === "gen_ai.response.finish_reasons");
    expect(reasons?.value).toEqual({ arrayValue: { values: [{ stringValue: row.finishReason }] } });
    const post = (await received(name))[0]!;
    expect(post.path).toMatch(/\/v1\/traces$/);
    expect(post.headers["content-type"]).toBe("application/json");
    expect(post.headers["x-honeycomb-team"]).toBe("team-secret-value");

    const view = (await (await call("/v1/master/organization", { key: o.masterKey })).json()) as Json;
    expect(view.organization.observability).toMatchObject({ otlpEndpoint: receiver(name), otlpHeaderNames: ["x-honeycomb-team"] });
    const status = await until(async () => ((await (await call("/v1/master/organization", { key: o.masterKey })).json()) as Json).organization.observability.lastDelivery, (d) => d?.ok === true);
    expect(status).toMatchObject({ ok: true, status: 200 });
    expect(JSON.stringify(view)).not.toContain("team-secret-value");
    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const page = await (await call("/dashboard/organization", { headers: { cookie: owner.cookie, accept: "text/html" } })).text();
    expect(page).toContain('data-otlp-status="ok"');
    expect(page).not.toContain("team-secret-value");

    // Off: no more spans.
    expect((await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: null }) })).status).toBe(200);
    const after = await chat(o.key, { model: "gpt-4o-mini", messages: user("not traced") });
    await waitForLog(after.headers.get("x-request-id")!);
    await new Promise((ok) => setTimeout(ok, 500));
    expect(await spans(name)).toHaveLength(1);
  });

  it("delivers every request exactly once through a collector that is down, then up", async () => {
    const o = await seedOrg();
    const name = `otlp-down-${crypto.randomUUID().slice(0, 8)}`;
    expect((await enableExport(o, `${receiver(name)}/fail=3`)).status).toBe(200);
    const ids: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < 12; i++) {
      const r = await chat(o.key, { model: "gpt-4o-mini", messages: user(`request ${i}`) });
      expect(r.status).toBe(200);
      ids.push(r.headers.get("x-request-id")!);
    }
    const requestMs = Date.now() - t0;
    await Promise.all(ids.map((id) => waitForLog(id, 10_000)));
    const got = await until(() => spans(name), (s) => s.length >= ids.length, 30_000);
    const seen = got.map((s) => attrs(s)["switchboard.request_id"]);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await received(name)).filter((r) => r.status === 503)).toHaveLength(3);
    // The collector's failures never sat on the request path (generous: the machine is shared).
    expect(requestMs / ids.length).toBeLessThan(2000);
  });

  it("refuses an endpoint the outbound-address guard refuses, and bad input", async () => {
    const o = await seedOrg();
    const bad = await enableExport(o, "ftp://collector.example.com");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.param).toBe("observability.otlpEndpoint");
    expect((await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: { otlpEndpoint: "https://x.example.com", extra: 1 } }) })).status).toBe(400);
    // Loopback is refused in production (the same guard as custom providers).
    expect(checkUpstreamUrl("http://127.0.0.1:4318", { production: true }).ok).toBe(false);
  });
});

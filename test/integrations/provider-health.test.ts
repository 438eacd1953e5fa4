/**
 * provider.down / provider.recovered: a provider's uptime (all its models) below 90% over enough
 * attempts is down; back at 95% it has recovered; each organization subscribed gets the event.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { call, json, seedOrg } from "../helpers/fixtures";
import { addSample, seriesKey, type AttemptSample, type Series } from "../../src/routing/metrics";
import { checkProviderHealth, healthTransitions, providerUptimes } from "../../src/integrations/provider-health";

interface Received { headers: Record<string, string>; body: string; status: number }
const receiver = (name: string) => `${env.FAKE_UPSTREAM_URL}/receiver/${name}`;
const received = async (name: string): Promise<Received[]> => (await (await fetch(receiver(name))).json()) as Received[];

function seriesOf(provider: string, ok: number, errors: number, now: number): Series {
  const series: Series = {};
  const base = { provider, at: now, ttftMs: 100, outputTokens: 10, generationMs: 100 };
  for (const [model, n, outcome] of [["m1", ok, "ok"], ["m2", errors, "error"]] as const) {
    for (let i = 0; i < n; i++) {
      const s: AttemptSample = { ...base, model, outcome };
      series[seriesKey(provider, model)] = addSample(series[seriesKey(provider, model)] ?? [], s);
    }
  }
  return series;
}

describe("provider health events", () => {
  it("judges a provider over all its models, with a gap between down and recovered", () => {
    const now = Date.now();
    expect(providerUptimes(seriesOf("groq", 8, 2, now), now).get("groq")).toEqual({ uptime: 0.8, attempts: 10 });
    expect(healthTransitions(providerUptimes(seriesOf("groq", 8, 2, now), now), new Set())).toEqual({ down: ["groq"], recovered: [] });
    expect(healthTransitions(providerUptimes(seriesOf("groq", 4, 1, now), now), new Set())).toEqual({ down: [], recovered: [] }); // too few attempts
    expect(healthTransitions(providerUptimes(seriesOf("groq", 92, 8, now), now), new Set(["groq"]))).toEqual({ down: [], recovered: [] }); // 92%: not yet
    expect(healthTransitions(providerUptimes(seriesOf("groq", 96, 4, now), now), new Set(["groq"]))).toEqual({ down: [], recovered: ["groq"] });
  });

  it("sends provider.down, then provider.recovered, to subscribed webhooks", async () => {
    const o = await seedOrg();
    const name = `wh-prov-${crypto.randomUUID().slice(0, 8)}`;
    const res = await call("/v1/master/webhooks", { method: "POST", key: o.masterKey, ...json({ url: receiver(name), events: ["provider.down", "provider.recovered"] }) });
    const { secret } = ((await res.json()) as { webhook: { secret: string } }).webhook;
    const now = Date.now();
    const provider = `fake-${crypto.randomUUID().slice(0, 6)}`;
    const down = await checkProviderHealth(env, seriesOf(provider, 5, 5, now), new Set(), now);
    expect(down.has(provider)).toBe(true);
    const up = await checkProviderHealth(env, seriesOf(provider, 20, 0, now), down, now);
    expect(up.has(provider)).toBe(false);
    const deadline = Date.now() + 10_000;
    let got: Received[] = [];
    while (got.length < 2 && Date.now() < deadline) {
      got = await received(name);
      await new Promise((r) => setTimeout(r, 100));
    }
    const events = got.map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { provider: string; organizationId: string } });
    expect(events.map((e) => e.type).sort()).toEqual(["provider.down", "provider.recovered"]);
    expect(events.every((e) => e.data.provider === provider && e.data.organizationId === o.orgId)).toBe(true);
  });
});

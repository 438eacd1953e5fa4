/**
 * The caller's continent steers ranking between endpoints of one provider: with nothing measured
 * yet, an endpoint on the caller's continent gets the near prior and others the far one. The
 * organization's deepinfra keys serve two regions (a key with a region adds that endpoint), each
 * at its own path of the fake upstream.
 */
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, resetMetrics, useRegionalKeys, user } from "./helpers";

const MODEL = "deepinfra/llama-3.3-70b-instruct";
const upstream = (prefix: string) => `${(env as unknown as { FAKE_UPSTREAM_URL: string }).FAKE_UPSTREAM_URL}/${prefix}`;
type Body = Record<string, any>;

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
  await useRegionalKeys(org, "deepinfra", [
    { region: "us", baseUrl: upstream("deepinfra-us") },
    { region: "eu-west-1", baseUrl: upstream("deepinfra-eu") },
  ]);
});
beforeEach(resetMetrics);

const ask = async (continent: string | null, text = "hi"): Promise<Body> => {
  const headers: Record<string, string> = { "x-no-cache": "true" };
  if (continent) headers["x-debug-caller-continent"] = continent;
  const res = await chat(org.key, { model: MODEL, messages: user(`${text} ${crypto.randomUUID()}`) }, headers);
  return (await res.json()) as Body;
};

describe("caller continent and regional endpoints", () => {
  it("a European caller starts on the European endpoint, a North American one on the US endpoint", async () => {
    expect((await ask("EU")).metadata.used_region).toBe("eu-west-1");
    expect((await ask("NA")).metadata.used_region).toBe("us");
  });

  it("each (provider, region) is failed over on its own: the near region fails, the far one answers", async () => {
    const body = await ask("EU", "x [[fake@deepinfra-eu:status=503]]");
    expect(body.metadata.routing).toEqual([
      expect.objectContaining({ provider: "deepinfra", region: "eu-west-1", succeeded: false }),
      expect.objectContaining({ provider: "deepinfra", region: "us", succeeded: true }),
    ]);
    expect(body.metadata.used_region).toBe("us");
  });
});

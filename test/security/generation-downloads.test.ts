/**
 * Generation downloads reach only what the SSRF guard allows and never
 * follow redirects. A BYOK upstream (an organization's own server) names the result link of a
 * generated image; the gateway fetches it for `b64_json`, so a link to an internal address must
 * be refused (a 502, nothing of the target in the answer), and so must a link that redirects.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { checkNamedUrl } from "../../src/lib/ssrf";
import { recorded } from "../helpers/recorded";

const FAKE = () => env.FAKE_UPSTREAM_URL as string;
/** base64 of "internal secret", what /internal/secret on the fake upstream serves. */
const SECRET_B64 = btoa("internal secret");

async function byokOrg(provider: string, baseUrl: string): Promise<SeededOrg> {
  const org = await seedOrg();
  const pk = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider, token: `byok-${provider}-${crypto.randomUUID().slice(0, 8)}`, baseUrl }) });
  expect(pk.status).toBe(201);
  return org;
}

const generate = (org: SeededOrg, prompt: string) =>
  call("/v1/images/generations", { method: "POST", key: org.key, ...json({ prompt, model: "alibaba/qwen-image-3.0", response_format: "b64_json" }) });

describe("image result links named by the upstream", () => {
  it("a link to another internal host is refused: 502, the target's body never returned", async () => {
    const org = await byokOrg("alibaba", `${FAKE()}/alibaba`);
    // The fake upstream is 127.0.0.1:<port>; localhost:<port> is the same server under another origin.
    const internal = FAKE().replace("127.0.0.1", "localhost") + "/internal/secret";
    const res = await generate(org, `a cat [[fake:image_url=${internal}]]`);
    const text = await res.text();
    expect(res.status, text).toBe(502);
    expect(text).not.toContain(SECRET_B64);
    expect(JSON.parse(text)).toMatchObject({ error: { type: "upstream_error" } });
  });

  it("a link on the provider's own origin that redirects is refused, not followed", async () => {
    const org = await byokOrg("alibaba", `${FAKE()}/alibaba`);
    const res = await generate(org, `a dog [[fake:image_url=${FAKE()}/alibaba/__redirect]]`);
    const text = await res.text();
    expect(res.status, text).toBe(502);
    expect(text).not.toContain(SECRET_B64);
    expect(text).toContain("redirect");
  });

  it("the provider's own links keep working", async () => {
    const org = await byokOrg("alibaba", `${FAKE()}/alibaba`);
    const res = await generate(org, "a bird");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ b64_json?: string }> };
    expect(body.data[0]!.b64_json).toMatch(/^iVBOR/);
  });

  it("checkNamedUrl: public https, or the base URL's own origin; nothing else", () => {
    const base = "http://127.0.0.1:8790/alibaba";
    expect(checkNamedUrl("https://dashscope-result.oss-cn-beijing.aliyuncs.com/a.png?Signature=x", base).ok).toBe(true);
    expect(checkNamedUrl("http://127.0.0.1:8790/alibaba/__images/a.png", base).ok).toBe(true);
    for (const url of [
      "http://127.0.0.1:8791/x",
      "http://localhost:8790/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]:8790/x",
      "http://10.0.0.5/x",
      "https://192.168.1.1/x",
      "https://metadata.google.internal/x",
      "http://public.example.com/x",
      "http://user:pw@127.0.0.1:8790/x",
      "file:///etc/passwd",
      "not a url",
    ]) {
      expect(checkNamedUrl(url, base).ok, url).toBe(false);
    }
    // A public base does not open loopback.
    expect(checkNamedUrl("http://127.0.0.1/x", "https://api.example.com/v1").ok).toBe(false);
  });
});

describe("embeddings upstream redirects", () => {
  it("a 307 from the upstream is a 502; the target never gets the request or the credential", async () => {
    const org = await byokOrg("openai", `${FAKE()}/openai`);
    const tag = `emb-redir-${crypto.randomUUID().slice(0, 8)}`;
    const res = await call("/v1/embeddings", {
      method: "POST",
      key: org.key,
      ...json({ model: "openai/text-embedding-3-small", input: `hello [[fake:redirect]] [[tag:${tag}]]` }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(502);
    expect(text).toContain("redirect");
    const sent = await recorded(tag);
    expect(sent.map((r) => r.provider)).toEqual(["openai"]);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user } from "./helpers";
import { recorded } from "../helpers/recorded";

type Body = Record<string, any>;

const pem = (label: string, der: ArrayBuffer): string => {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
};

/** A service-account key file like the one Google Cloud downloads, for a freshly generated key pair. */
async function serviceAccount(email: string, register = true): Promise<string> {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const privateKey = pem("PRIVATE KEY", (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  if (register) {
    const publicKey = pem("PUBLIC KEY", (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
    await fetch(`${env.FAKE_UPSTREAM_URL}/google-oauth/__keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_email: email, public_key: publicKey }) });
  }
  return JSON.stringify({
    type: "service_account",
    project_id: "switchboard-test",
    private_key_id: crypto.randomUUID().replace(/-/g, ""),
    private_key: privateKey,
    client_email: email,
    client_id: "1234567890",
    token_uri: "https://oauth2.googleapis.com/token",
  });
}

async function orgWithVertexKey(token: string): Promise<SeededOrg> {
  const org = await seedOrg();
  const pk = await call("/v1/master/provider-keys", { method: "POST", key: org.masterKey, ...json({ provider: "google-vertex", token }) });
  expect(pk.status).toBe(201);
  return org;
}

const sentHeaders = async (tag: string): Promise<Array<Record<string, string>>> => (await recorded(tag)).map((r) => r.headers);

describe("Vertex AI credentials", () => {
  let org: SeededOrg;
  let key: string;
  beforeAll(async () => {
    key = await serviceAccount(`gateway@switchboard-test.iam.gserviceaccount.com`);
    org = await orgWithVertexKey(key);
  });

  it("exchanges a service-account key file for an access token (signed JWT) and reuses it until it nears expiry", async () => {
    for (const n of [1, 2]) {
      const res = await chat(org.key, { model: "google-vertex/gemini-2.5-flash", messages: user(`vertex sa ${n} [[tag:vx-sa-${n}]]`) });
      const body = (await res.json()) as Body;
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.metadata.routing[0].credentialSource).toBe("byok");
    }
    const [first] = await sentHeaders("vx-sa-1");
    const [second] = await sentHeaders("vx-sa-2");
    expect(first!.authorization).toMatch(/^Bearer fake-vertex-token-\d+$/);
    expect(second!.authorization).toBe(first!.authorization);
  });

  it("a key the token endpoint refuses is a clear error, never an echo of the key file", async () => {
    const unknown = await orgWithVertexKey(await serviceAccount("stranger@switchboard-test.iam.gserviceaccount.com", false));
    const res = await chat(unknown.key, { model: "google-vertex/gemini-2.5-flash", messages: user("vertex refused") });
    const text = await res.text();
    expect(res.status).toBeGreaterThanOrEqual(400);
    const body = JSON.parse(text) as Body;
    expect(body.error.message).toMatch(/token exchange for stranger@switchboard-test\.iam\.gserviceaccount\.com failed: Invalid JWT Signature/);
    expect(text).not.toContain("PRIVATE KEY");
  });

  it("sends an express-mode API key as x-goog-api-key and anything else as a bearer access token", async () => {
    const apiKeyOrg = await orgWithVertexKey("AIzaSyA-0123456789abcdefghijklmnopqrstu");
    expect((await chat(apiKeyOrg.key, { model: "google-vertex/gemini-2.5-flash", messages: user("vertex key [[tag:vx-apikey]]") })).status).toBe(200);
    const [viaKey] = await sentHeaders("vx-apikey");
    expect(viaKey!["x-goog-api-key"]).toBe("AIzaSyA-0123456789abcdefghijklmnopqrstu");
    expect(viaKey!.authorization).toBeUndefined();

    const tokenOrg = await orgWithVertexKey("ya29.a0-access-token");
    expect((await chat(tokenOrg.key, { model: "google-vertex/gemini-2.5-flash", messages: user("vertex token [[tag:vx-token]]") })).status).toBe(200);
    expect((await sentHeaders("vx-token"))[0]!.authorization).toBe("Bearer ya29.a0-access-token");
  });

  it("never shares a cached token with another organization's forged key file (same client_email and key id)", async () => {
    const victimEmail = `victim-${crypto.randomUUID().slice(0, 8)}@switchboard-test.iam.gserviceaccount.com`;
    const genuine = await serviceAccount(victimEmail);
    const victim = await orgWithVertexKey(genuine);
    expect((await chat(victim.key, { model: "google-vertex/gemini-2.5-flash", messages: user("victim warms the cache [[tag:vx-victim]]") })).status).toBe(200);
    const [victimSent] = await sentHeaders("vx-victim");

    // The attacker copies client_email and private_key_id but can only sign with its own key.
    const forged = JSON.parse(await serviceAccount(victimEmail, false)) as Record<string, string>;
    forged.private_key_id = (JSON.parse(genuine) as Record<string, string>).private_key_id!;
    const attacker = await orgWithVertexKey(JSON.stringify(forged));
    const res = await chat(attacker.key, { model: "google-vertex/gemini-2.5-flash", messages: user("attacker [[tag:vx-attacker]]") });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(((await res.json()) as Body).error.message).toMatch(/Invalid JWT Signature/);
    const attackerSent = await sentHeaders("vx-attacker");
    expect(attackerSent.map((h) => h.authorization)).not.toContain(victimSent!.authorization);
  });
});

/**
 * A real OpenID provider for the SSO tests: the certified `oidc-provider` package, on 127.0.0.1,
 * started by the vitest global setup (and by the browser suite). Its own development login page
 * accepts any login (the login is the account id and the e-mail); its consent page is answered
 * like any other form.
 *
 * Two test doors, beside the provider's own routes:
 * - `POST /__login {url, login}`: plays a person in a browser, from the authorization URL through
 *   the provider's login and consent forms, and answers `{location}`: the redirect back to the
 *   client, unfollowed (the workerd tests cannot keep the provider's cookies themselves).
 * - `POST /__tamper {mode}`: the next ID token the token endpoint issues is altered the way a
 *   broken or hostile provider would: `bad-signature` (signed by a key not in the JWKS, same
 *   `kid`), `wrong-audience`, `expired`, `wrong-nonce` (each re-signed with the provider's real
 *   key, so only that one property is wrong); `unverified-email`: the next UserInfo answer says
 *   `email_verified: false`.
 *
 * Accounts: `<anything>@<domain>` is an account whose e-mail is itself and verified.
 */
import http from "node:http";
import * as jose from "jose";
import Provider from "oidc-provider";

import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } from "./client.mjs";

export { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET };

const TAMPERS = new Set(["bad-signature", "wrong-audience", "expired", "wrong-nonce", "unverified-email"]);

async function readJson(req) {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return raw ? JSON.parse(raw) : {};
}

/** A tiny cookie jar and form filler: enough for the provider's own development pages. */
async function playBrowser(startUrl, login, redirectPrefixes) {
  const jar = new Map();
  let url = startUrl;
  let init = { method: "GET" };
  for (let hop = 0; hop < 20; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers ?? {}), ...(cookie ? { cookie } : {}) } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get("location");
    if (location) {
      await res.body?.cancel();
      const next = new URL(location, url).href;
      if (redirectPrefixes.some((p) => next.startsWith(p))) return next;
      url = next;
      init = { method: "GET" };
      continue;
    }
    const html = await res.text();
    if (res.status >= 400) throw new Error(`provider answered ${res.status}: ${html.slice(0, 300)}`);
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!form) throw new Error(`no form on ${url}: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const input of form[2].matchAll(/<input([^>]*)>/g)) {
      const name = /name="([^"]+)"/.exec(input[1])?.[1];
      if (!name) continue;
      const value = /value="([^"]*)"/.exec(input[1])?.[1] ?? "";
      fields.set(name, name === "login" ? login : name === "password" ? "any password" : value);
    }
    url = new URL(form[1].replace(/&amp;/g, "&"), url).href;
    init = { method: "POST", body: fields.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } };
  }
  throw new Error("too many hops at the provider");
}

/** Starts the provider; `redirectOrigins` are the gateway origins whose callback it accepts. */
export async function startOidcProvider({ port = 0, redirectOrigins = ["http://gw.test"] } = {}) {
  const { privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const signing = { ...(await jose.exportJWK(privateKey)), kid: "test-key-1", alg: "RS256", use: "sig" };
  const { privateKey: strangerKey } = await jose.generateKeyPair("RS256");
  const server = http.createServer();
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const redirectUris = redirectOrigins.map((o) => `${o}/dashboard/sso/callback`);

  const provider = new Provider(issuer, {
    clients: [{ client_id: OIDC_CLIENT_ID, client_secret: OIDC_CLIENT_SECRET, redirect_uris: redirectUris, grant_types: ["authorization_code"], response_types: ["code"] }],
    jwks: { keys: [signing] },
    cookies: { keys: ["oidc-test-cookie-key"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id, email: id, email_verified: true, name: `Person ${id.split("@")[0]}` }) };
    },
  });
  // Plain http on loopback: the provider would otherwise refuse to set its cookies.
  provider.proxy = true;

  let tamper = null;
  provider.use(async (ctx, next) => {
    await next();
    // Scope claims are in UserInfo (the provider conforms: the ID token carries them only when no
    // access token is issued), so that is where an unverified e-mail shows.
    if (ctx.path === "/me" && tamper === "unverified-email" && ctx.body && typeof ctx.body === "object") {
      tamper = null;
      ctx.body = { ...ctx.body, email_verified: false };
      return;
    }
    if (ctx.path !== "/token" || !tamper || tamper === "unverified-email" || !ctx.body || typeof ctx.body.id_token !== "string") return;
    const mode = tamper;
    tamper = null;
    const claims = jose.decodeJwt(ctx.body.id_token);
    const now = Math.floor(Date.now() / 1000);
    if (mode === "wrong-audience") claims.aud = "someone-else";
    if (mode === "expired") Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
    if (mode === "wrong-nonce") claims.nonce = "not-the-nonce-that-was-sent";
    const key = mode === "bad-signature" ? strangerKey : privateKey;
    ctx.body = { ...ctx.body, id_token: await new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: signing.kid }).sign(key) };
  });

  const handler = provider.callback();
  server.on("request", async (req, res) => {
    try {
      if (req.method === "POST" && req.url === "/__tamper") {
        const { mode } = await readJson(req);
        if (!TAMPERS.has(mode)) throw new Error(`unknown tamper mode ${mode}`);
        tamper = mode;
        res.writeHead(204).end();
        return;
      }
      if (req.method === "POST" && req.url === "/__login") {
        const { url, login } = await readJson(req);
        const location = await playBrowser(url, login, redirectUris);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ location }));
        return;
      }
      handler(req, res);
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(err?.stack ?? err));
    }
  });

  return {
    issuer,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

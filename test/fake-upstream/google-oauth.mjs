// @ts-check
/**
 * Fake Google OAuth 2.0 token endpoint for service accounts (developers.google.com/identity/protocols/oauth2/service-account):
 * - POST /google-oauth/token, form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`:
 *   verifies the RS256 signature with the account's registered public key and the claims Google
 *   requires (iss, scope, aud = this endpoint, exp - iat <= 3600), then answers
 *   `{ access_token, expires_in, token_type }`; otherwise 400 `{ error: "invalid_grant", error_description }`.
 * - POST /google-oauth/__keys `{ client_email, public_key }` (SPKI PEM): test introspection, registers
 *   the public half of a key pair a test generated (no private key lives in the repository).
 * Issued tokens are `fake-vertex-token-<n>`; the fake Vertex route accepts any Bearer token.
 */
import { createPublicKey, verify } from "node:crypto";

/** @type {Map<string, import("node:crypto").KeyObject>} */
const publicKeys = new Map();
let issued = 0;

/** @param {import("node:http").ServerResponse} res @param {string} description */
function invalidGrant(res, description) {
  res.writeHead(400, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: "invalid_grant", error_description: description }));
}

/** @param {string} part */
const decode = (part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));

/** @type {import("./server.mjs").FakeRoute[]} */
export const googleOAuthRoutes = [
  {
    name: "google oauth: register a test public key",
    match: (req) => req.provider === "google-oauth" && req.method === "POST" && req.path === "/__keys",
    async handle(req, res) {
      publicKeys.set(String(req.body?.client_email), createPublicKey(String(req.body?.public_key)));
      res.writeHead(204).end();
    },
  },
  {
    name: "google oauth: service-account token",
    match: (req) => req.provider === "google-oauth" && req.method === "POST" && req.path === "/token",
    async handle(req, res) {
      const form = new URLSearchParams(req.rawBody.toString("utf8"));
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return invalidGrant(res, "unsupported grant_type");
      const [h, c, s] = String(form.get("assertion") ?? "").split(".");
      if (!h || !c || !s) return invalidGrant(res, "Invalid JWT: malformed");
      const header = decode(h);
      const claims = decode(c);
      if (header.alg !== "RS256") return invalidGrant(res, "Invalid JWT: alg must be RS256");
      const key = publicKeys.get(claims.iss);
      if (!key) return invalidGrant(res, "Invalid JWT Signature.");
      if (!verify("RSA-SHA256", Buffer.from(`${h}.${c}`), key, Buffer.from(s, "base64url"))) return invalidGrant(res, "Invalid JWT Signature.");
      const self = `http://${req.headers.host}/google-oauth/token`;
      if (claims.aud !== self) return invalidGrant(res, `Invalid JWT: aud must be ${self}`);
      if (claims.scope !== "https://www.googleapis.com/auth/cloud-platform") return invalidGrant(res, "Invalid JWT: scope");
      const now = Math.floor(Date.now() / 1000);
      if (!(claims.iat <= now + 60 && claims.exp > now && claims.exp - claims.iat <= 3600)) return invalidGrant(res, "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: `fake-vertex-token-${++issued}`, expires_in: 3599, token_type: "Bearer" }));
    },
  },
];

/** The client the gateway is registered as at the test OpenID provider (shared by both sides). */
export const OIDC_CLIENT_ID = "switchboard-tests";
export const OIDC_CLIENT_SECRET = "oidc-test-client-secret-0123456789abcdef";

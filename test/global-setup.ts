import type { TestProject } from "vitest/node";
import { startFakeUpstream } from "./fake-upstream/server.mjs";
import { startOidcProvider } from "./oidc-provider/server.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    fakeUpstreamPort: number;
    /** The issuer URL of the real OpenID provider the SSO tests sign in through. */
    oidcIssuer: string;
  }
}

/** Starts the fake upstream providers and the OpenID provider on 127.0.0.1 for the whole run. */
export default async function setup(project: TestProject) {
  const server = await startFakeUpstream({ port: 0 });
  const oidc = await startOidcProvider({ port: 0 });
  project.provide("fakeUpstreamPort", server.port);
  project.provide("oidcIssuer", oidc.issuer);
  return async () => {
    await Promise.all([server.close(), oidc.close()]);
  };
}

import type { TestProject } from "vitest/node";
import { startFakeUpstream } from "./fake-upstream/server.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    fakeUpstreamPort: number;
  }
}

/** Starts the fake upstream providers on 127.0.0.1 for the whole run. */
export default async function setup(project: TestProject) {
  const server = await startFakeUpstream({ port: 0 });
  project.provide("fakeUpstreamPort", server.port);
  return async () => {
    await server.close();
  };
}

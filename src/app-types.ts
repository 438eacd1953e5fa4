import type { Env } from "./env";
import type { KeyContext } from "./auth/key-context";
import type { MasterContext } from "./auth/master-auth";
import type { RateVerdict } from "./rate-limits/admission";
import type { PlatformContext } from "./platform/platform-keys";

/** Variables middleware puts on the Hono context. */
export interface AppVariables {
  requestId: string;
  /** Set by `requireGatewayKey`. */
  keyAuth: KeyContext;
  /** The request's rate-limit count, once its gateway key is known (src/rate-limits/admission.ts). */
  rate?: Promise<RateVerdict>;
  /** Set by `requireMasterKey`. */
  master: MasterContext;
  /** Set by `requirePlatformKey` (src/platform/platform-keys.ts). */
  platform: PlatformContext;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}

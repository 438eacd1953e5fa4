/**
 * The Hono context's types: the variables middleware sets. The context records they hold are
 * declared here, not in the middleware modules that fill them, so those modules can import `AppEnv`
 * without an import circle.
 */
import type { Env } from "./env";
import type { ApiError } from "./errors/api-error";
import type { KeyContext } from "./context/key-context";
import type { RequestProbe } from "./lib/probe";

/** A master key's request: set by `requireMasterKey` (src/auth/master-auth.ts). */
export interface MasterContext {
  masterKeyId: string;
  organizationId: string;
}

/** A platform (`sk_`) key's request: set by `requirePlatformKey` (src/platform/platform-keys.ts). */
export interface PlatformContext {
  platformKeyId: string;
  organizationId: string;
  projectId: string;
  createdBy: string;
  /** Of the secret this call authenticated with. */
  fingerprint: string;
}

/** A request's rate-limit count (src/rate-limits/admission.ts). */
export interface RateVerdict {
  /** The `x-ratelimit-*` headers of the tightest request limit (empty when none applies). */
  headers: Record<string, string>;
  /** The 429 to answer, when a limit refused the request. */
  error: ApiError | null;
}

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
  /** The bench's path-timing hook (src/routes/middleware/instruments.ts); silent unless traced. */
  probe?: RequestProbe;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}

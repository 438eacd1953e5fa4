/**
 * What every gateway (key-authenticated) handler passes down to its service: bindings, waitUntil,
 * the key's context, the request id, app attribution and the client IP. One place builds it, so
 * chat, images, videos and MCP attribute and rule-check requests the same way.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../app-types";
import type { Env } from "../../env";
import type { KeyContext } from "../../context/key-context";
import { clientIpOf } from "../../iam/cidr";
import { detectSourceApp } from "../../usage/source-app";
import { isProduction } from "../../env";
import { callerContinent, type Continent } from "../../routing/regions";
import { silentProbe, type RequestProbe } from "../../lib/probe";

export interface GatewayRequest {
  env: Env;
  waitUntil: (p: Promise<unknown>) => void;
  auth: KeyContext;
  requestId: string;
  sourceApp: string;
  clientIp: string | null;
  /** Aborts when the client goes away (workerd `enable_request_signal`, the default since compatibility date 2026-11-17): spending routes stop the upstream and settle. */
  signal?: AbortSignal;
  /** Where the caller is (`cf.continent`, or `x-debug-caller-continent` outside production); routing ranks by it. */
  callerContinent?: Continent | null;
  /** The bench's path-timing hook (src/lib/probe.ts); the silent one unless the request is traced. */
  probe?: RequestProbe;
}

export { clientIpOf };

export function gatewayRequest(c: Context<AppEnv>, auth: KeyContext = c.get("keyAuth")): GatewayRequest {
  const headers = c.req.raw.headers;
  return {
    env: c.env,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
    auth,
    requestId: c.get("requestId"),
    sourceApp: detectSourceApp(headers),
    clientIp: clientIpOf(headers),
    signal: c.req.raw.signal,
    callerContinent: callerContinent(c.req.raw, isProduction(c.env)),
    probe: c.get("probe") ?? silentProbe,
  };
}

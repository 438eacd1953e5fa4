/**
 * Failover policy (pure). An attempt either succeeds or fails with a classified failure:
 *
 * | failure                                    | retry on next candidate | counts against uptime |
 * |--------------------------------------------|-------------------------|-----------------------|
 * | network error, per-attempt timeout (*)     | yes                     | yes                   |
 * | malformed upstream answer, error before any output of a stream | yes | yes                   |
 * | HTTP 5xx, 429                              | yes                     | yes                   |
 * | HTTP 401/403 with the operator's key       | yes                     | yes                   |
 * | HTTP 401/403 with the caller's own key     | no (their key is bad)   | no                    |
 * | other 4xx (the request itself)             | no, returned as is      | no                    |
 * | input this provider's format cannot carry  | yes (another may)       | no                    |
 *
 * (*) A first-byte timeout the caller chose shorter than the one derived for the provider
 * (src/routing/timeouts.ts) does not count against its uptime.
 *
 * `x-no-fallback: true` means a single attempt. When every attempt failed the answer is the last
 * failure: a client error keeps its status, 429 stays 429, timeouts become 504, the rest 502.
 */
import { ApiError, type ErrorType } from "../errors/api-error";

export type FailureKind = "network" | "timeout" | "http" | "malformed" | "stream_error" | "unsupported_input";

export interface AttemptFailure {
  kind: FailureKind;
  /** Upstream HTTP status, or 0 when none (network). */
  status: number;
  message: string;
  /** Provider's error type, or ours. */
  errorType: string;
  retryable: boolean;
  /** Counts as a provider failure in the live metrics. */
  providerFault: boolean;
  /** The provider's `Retry-After` on a 429, in seconds: passed on when the request ends on it. */
  retryAfterSeconds?: number;
}

/** Longest `Retry-After` passed on: a provider's hour-long hint is still a hint, not a ban. */
const MAX_RETRY_AFTER_S = 3_600;

/** A `Retry-After` header (delta-seconds or an HTTP date) in whole seconds from `now`; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const v = header.trim();
  const seconds = /^\d+(\.\d+)?$/.test(v) ? Number(v) : (Date.parse(v) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(0, Math.ceil(seconds)));
}

export function classifyHttp(status: number, credentialSource: "credits" | "byok", message: string, errorType: string, retryAfter?: number): AttemptFailure {
  const base = { kind: "http" as const, status, message, errorType };
  if (status === 429) return { ...base, retryable: true, providerFault: true, ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }) };
  if (status >= 500 || status === 408) return { ...base, retryable: true, providerFault: true };
  if (status === 401 || status === 403) {
    const ours = credentialSource === "credits";
    return { ...base, retryable: ours, providerFault: ours };
  }
  return { ...base, retryable: false, providerFault: false };
}

export const networkFailure = (message: string): AttemptFailure => ({
  kind: "network", status: 0, message, errorType: "network_error", retryable: true, providerFault: true,
});

/**
 * `providerFault: false` when the bound was the caller's own, shorter than the one the gateway
 * derives for the provider: a caller must not be able to mark a healthy provider down.
 */
export const timeoutFailure = (ms: number, providerFault = true): AttemptFailure => ({
  kind: "timeout", status: 0, message: `the provider did not answer within ${ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}`, errorType: "timeout", retryable: true, providerFault,
});

export const malformedFailure = (message: string): AttemptFailure => ({
  kind: "malformed", status: 0, message, errorType: "malformed_response", retryable: true, providerFault: true,
});

export const streamFailure = (message: string, errorType: string): AttemptFailure => ({
  kind: "stream_error", status: 0, message, errorType, retryable: true, providerFault: true,
});

/** The adapter refused the request (e.g. audio input to a format without audio): try another provider. */
export const unsupportedInput = (message: string): AttemptFailure => ({
  kind: "unsupported_input", status: 0, message, errorType: "unsupported_input", retryable: true, providerFault: false,
});

/** Status code recorded in `metadata.routing[].status_code` (502/504 for failures without one). */
export const attemptStatus = (f: AttemptFailure): number =>
  f.status ? f.status : f.kind === "timeout" ? 504 : f.kind === "unsupported_input" ? 400 : 502;

/**
 * THE status mapping of an upstream's refusal of the request itself (a non-retryable 4xx), on
 * every endpoint (chat, images, moderations): the upstream's status is kept (404 stays 404, 422
 * stays 422), the type follows it and the code is `upstream_<status>`. (A model id the gateway does
 * not know is its own `model_not_found`: 400 with param `model`, everywhere.)
 */
export function upstreamRejection(status: number, message: string): ApiError {
  const code = status >= 400 && status < 500 ? status : 400;
  const type: ErrorType = code === 401 ? "authentication_error" : code === 403 ? "permission_error" : code === 404 ? "not_found_error" : "invalid_request_error";
  return new ApiError(code as 400, message, { type, code: `upstream_${code}` });
}

/** The error returned to the caller when the last attempt failed. */
export function finalError(last: AttemptFailure, attempts: number, provider: string): ApiError {
  if (last.kind === "http" && !last.retryable) return upstreamRejection(last.status, `${provider}: ${last.message}`);
  if (last.kind === "unsupported_input") {
    return new ApiError(400, `${provider}: ${last.message}`, { type: "invalid_request_error", code: "unsupported_input" });
  }
  const what = attempts > 1 ? `All ${attempts} provider attempts failed; last (${provider})` : `The provider ${provider} failed`;
  // A 429 always says when to come back (as the gateway's own limits do): the provider's hint, else a second.
  if (last.status === 429) {
    return new ApiError(429, `${what}: rate limited: ${last.message}`, { type: "rate_limit_error", code: "upstream_rate_limited", headers: { "retry-after": String(last.retryAfterSeconds ?? 1) } });
  }
  if (last.kind === "timeout") return new ApiError(504, `${what}: ${last.message}`, { type: "timeout_error", code: "upstream_timeout" });
  return new ApiError(502, `${what}: ${last.message}`, { type: "upstream_error", code: "upstream_error" });
}

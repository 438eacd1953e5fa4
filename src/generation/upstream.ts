/**
 * Calling a generation upstream: JSON in, JSON out, upstream failures classified so the caller can
 * fail over (retryable) or answer the client (not retryable). Never surfaces credentials.
 */
import { upstreamRejection } from "../routing/failover";
import { ApiError } from "../errors/api-error";
import { parseErrorBody } from "../providers/error-body";
import { tryParseJson } from "../providers/json";

export const UPSTREAM_TIMEOUT_MS = 120_000;

export class UpstreamFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorType: string,
  ) {
    super(message);
  }

  /** 5xx, 429 and network failures may succeed on another provider. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }

  /** The gateway's answer when no provider succeeded. */
  toApiError(): ApiError {
    if (this.status === 400 || this.status === 404 || this.status === 422) return upstreamRejection(this.status, `Upstream rejected the request: ${this.message}`);
    if (this.status === 429) return new ApiError(429, `Upstream rate limit: ${this.message}`, { type: "rate_limit_error", code: "upstream_rate_limited" });
    if (this.status === 0 && this.errorType === "timeout_error") {
      return new ApiError(504, "Upstream timed out", { type: "timeout_error", code: "upstream_timeout" });
    }
    return new ApiError(502, `Upstream error: ${this.message}`, { type: "upstream_error", code: "upstream_error" });
  }
}

/** `cancel` aborts the call (an early call that admission refused, src/billing/early-call.ts). */
export async function fetchJson(url: string, init: RequestInit, timeoutMs = UPSTREAM_TIMEOUT_MS, cancel?: AbortSignal): Promise<unknown> {
  let res: Response;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    // Never follow redirects (SSRF guard, docs/security.md): a 3xx is an upstream error below.
    res = await fetch(url, { ...init, redirect: "manual", signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout });
  } catch (err) {
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    throw new UpstreamFailure(0, timeout ? "timed out" : "could not reach the provider", timeout ? "timeout_error" : "network_error");
  }
  if (res.status >= 300 && res.status < 400) {
    void res.body?.cancel();
    throw new UpstreamFailure(502, `the provider answered with a redirect (HTTP ${res.status}); redirects are not followed`, "upstream_error");
  }
  const text = await res.text();
  if (!res.ok) {
    const info = parseErrorBody(res.status, text);
    throw new UpstreamFailure(res.status, info.message, info.type);
  }
  const body = tryParseJson(text);
  if (body === undefined) throw new UpstreamFailure(502, "invalid JSON from the provider", "upstream_error");
  return body;
}

import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The `type` values of the error envelope (spec 2.7), as OpenAI uses them. */
export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "insufficient_quota"
  | "upstream_error"
  | "timeout_error"
  | "api_error";

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string };
}

export interface ApiErrorInit {
  type: ErrorType;
  code: string;
  param?: string | null;
  headers?: Record<string, string>;
}

/**
 * Every failure the gateway answers on purpose is an ApiError; `onError` turns it into the
 * envelope. Anything else thrown is a bug and becomes a generic 500 without details.
 */
export class ApiError extends HTTPException {
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly extraHeaders: Record<string, string>;

  constructor(status: ContentfulStatusCode, message: string, init: ApiErrorInit) {
    super(status, { message });
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.extraHeaders = init.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, param: string | null = null, code = "invalid_request") =>
  new ApiError(400, message, { type: "invalid_request_error", code, param });

export const unauthorized = (message: string, code = "invalid_api_key") =>
  new ApiError(401, message, { type: "authentication_error", code });

/** IAM denials: spec section 7 fixes type and code. */
export const permissionDenied = (message: string) =>
  new ApiError(403, message, { type: "invalid_request_error", code: "permission_denied" });

export const forbidden = (message: string, code = "forbidden") =>
  new ApiError(403, message, { type: "permission_error", code });

export const notFound = (message: string, code = "not_found") =>
  new ApiError(404, message, { type: "not_found_error", code });

export const paymentRequired = (message: string) =>
  new ApiError(402, message, { type: "insufficient_quota", code: "insufficient_credits" });

export function envelope(message: string, type: ErrorType, code: string, param: string | null = null): ErrorEnvelope {
  return { error: { message, type, param, code } };
}

/**
 * Generic extraction of message and type from an upstream error body. Covers the shapes of every
 * supported format: OpenAI `{error:{message,type,code}}`, Anthropic `{type:"error",error:{type,message}}`,
 * Google `{error:{code,message,status}}`, Bedrock `{message}` / `{Message}` (+ `__type`), and plain text.
 */
import type { UpstreamErrorInfo } from "./types";
import { isRecord, str, tryParseJson } from "./json";

export function statusErrorType(status: number): string {
  if (status === 400 || status === 422) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 408 || status === 504) return "timeout_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}

const MAX_MESSAGE = 1000;

export function parseErrorBody(status: number, bodyText: string): UpstreamErrorInfo {
  const parsed = tryParseJson(bodyText);
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  let message: string | undefined;
  let type: string | undefined;
  if (isRecord(root)) {
    const err = root.error;
    if (isRecord(err)) {
      message = str(err.message);
      type = str(err.type) ?? str(err.status) ?? str(err.code);
    } else if (typeof err === "string") {
      message = err;
    }
    message ??= str(root.message) ?? str(root.Message) ?? str(root.detail);
    const awsType = str(root.__type);
    type ??= awsType ? awsType.split("#").pop() : undefined;
    if (type === undefined && typeof root.type === "string" && root.type !== "error") type = root.type;
  }
  if (message === undefined) {
    const text = bodyText.trim();
    message = text && parsed === undefined && text.length < MAX_MESSAGE ? text : `upstream returned HTTP ${status}`;
  }
  return { message: message.slice(0, MAX_MESSAGE), type: type ?? statusErrorType(status) };
}

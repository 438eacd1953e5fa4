import type { ZodType } from "zod";

/**
 * Every `validate(target, schema)` middleware carries its schema under this key, so the OpenAPI
 * document (src/openapi/document.ts) is generated from the very schemas that validate requests,
 * found by walking `app.routes`. No dependencies: imported by src/errors/validation.ts.
 */
export const REQUEST_SCHEMA = Symbol.for("switchboard.requestSchema");

export type RequestTarget = "json" | "query" | "param" | "form" | "header" | "cookie";

export interface RequestSchema {
  target: RequestTarget;
  schema: ZodType;
}

/** Attaches the schema to a validator middleware (returns the same function). */
export function withRequestSchema<H extends object>(handler: H, target: string, schema: ZodType): H {
  return Object.assign(handler, { [REQUEST_SCHEMA]: { target: target as RequestTarget, schema } satisfies RequestSchema });
}

/** The schema a middleware was tagged with, if any. */
export function requestSchemaOf(handler: unknown): RequestSchema | undefined {
  if (typeof handler !== "function") return undefined;
  const tagged = (handler as unknown as Record<symbol, unknown>)[REQUEST_SCHEMA];
  return tagged && typeof tagged === "object" ? (tagged as RequestSchema) : undefined;
}

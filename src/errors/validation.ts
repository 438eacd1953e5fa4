import type { ZodError } from "zod";
import type { ValidationTargets } from "hono";
import { zValidator as baseValidator } from "@hono/zod-validator";
import type { core, z, ZodObject, ZodType } from "zod";
import { badRequest } from "./api-error";
import { withRequestSchema } from "../openapi/request-schema";

/** First issue of a zod error as a readable sentence plus the dotted path for `param`. */
export function describeZodError(error: ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request", param: null };
  const param = issue.path.length ? issue.path.map(String).join(".") : null;
  return { message: param ? `Invalid value for '${param}': ${issue.message}` : issue.message, param };
}

/**
 * `@hono/zod-validator` with failures mapped to the spec's 400 envelope, `param` naming the field.
 * Use this instead of the raw validator everywhere. The schema is also attached to the middleware,
 * so `GET /openapi.json` documents exactly what is validated (src/openapi).
 */
export const validate = <T extends ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) =>
  withRequestSchema(
    baseValidator(target, schema, (result) => {
      if (!result.success) {
        const { message, param } = describeZodError(result.error as unknown as ZodError);
        throw badRequest(message, param);
      }
    }),
    target,
    schema,
  );

/**
 * Bodies of the master and dashboard (session) APIs: a field the route does not apply is a 400
 * naming the field, never silently dropped. `hints` add a sentence for known fields that belong
 * elsewhere (e.g. key TTLs, which only the dashboard sets).
 */
export const validateBody = <Shape extends core.$ZodShape>(schema: ZodObject<Shape>, hints: Readonly<Record<string, string>> = {}) => {
  const strict = schema.strict();
  return withRequestSchema(
    baseValidator("json", strict, (result) => {
      if (result.success) return;
      const error = result.error as unknown as ZodError;
      const unknownKeys = error.issues.find((i) => i.code === "unrecognized_keys");
      if (unknownKeys && unknownKeys.code === "unrecognized_keys") {
        const field = unknownKeys.keys[0] ?? "";
        const at = unknownKeys.path.length ? `${unknownKeys.path.map(String).join(".")}.${field}` : field;
        // Own keys only: a field named `constructor` or `__proto__` has no hint (not an Object.prototype member).
        const hint = Object.hasOwn(hints, field) ? ` ${hints[field]}` : "";
        throw badRequest(`Unknown field '${at}': this endpoint does not accept it.${hint}`, at, "unknown_field");
      }
      const { message, param } = describeZodError(error);
      throw badRequest(message, param);
    }),
    "json",
    strict,
  );
};

/** Validates an already-read body against `schema`, or throws the 400 naming the field. */
export function parseOrThrow<T extends ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { message, param } = describeZodError(result.error);
    throw badRequest(message, param);
  }
  return result.data;
}

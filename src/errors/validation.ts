import type { ZodError } from "zod";
import type { ValidationTargets } from "hono";
import { zValidator as baseValidator } from "@hono/zod-validator";
import type { z, ZodType } from "zod";
import { badRequest } from "./api-error";

/** First issue of a zod error as a readable sentence plus the dotted path for `param`. */
export function describeZodError(error: ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request", param: null };
  const param = issue.path.length ? issue.path.map(String).join(".") : null;
  return { message: param ? `Invalid value for '${param}': ${issue.message}` : issue.message, param };
}

/**
 * `@hono/zod-validator` with failures mapped to the spec's 400 envelope, `param` naming the field.
 * Use this instead of the raw validator everywhere.
 */
export const validate = <T extends ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) =>
  baseValidator(target, schema, (result) => {
    if (!result.success) {
      const { message, param } = describeZodError(result.error as unknown as ZodError);
      throw badRequest(message, param);
    }
  });

/** Validates an already-read body against `schema`, or throws the 400 naming the field. */
export function parseOrThrow<T extends ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { message, param } = describeZodError(result.error);
    throw badRequest(message, param);
  }
  return result.data;
}

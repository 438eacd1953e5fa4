import type { ZodError } from "zod";
import type { ValidationTargets } from "hono";
import { zValidator as baseValidator } from "@hono/zod-validator";
import type { core, z, ZodObject, ZodType } from "zod";
import { badRequest } from "./api-error";
import { withRequestSchema } from "../openapi/request-schema";

type Issue = ZodError["issues"][number];

const article = (type: string): string => (type === "array" ? "an array" : type === "object" ? "an object" : type === "null" ? "null" : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
/** zod's default invalid_type message names what arrived: "... received undefined". */
const receivedOf = (issue: Issue): string | null => /received (\w+)$/.exec(issue.message)?.[1] ?? null;
const quoteList = (values: readonly unknown[]): string => values.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(", ");
/** Messages zod writes itself; a schema's own message (refinements, `message:`) is kept as written. */
const isDefaultMessage = (m: string): boolean => /^(Invalid input|Invalid option|Invalid string|Invalid element|Invalid key|Too small|Too big|Unrecognized key)/.test(m);

/** The types a union accepts, when every option failed on the value itself (not deeper inside it). */
function unionTypes(issue: Issue): string[] | null {
  if (issue.code !== "invalid_union") return null;
  const types: string[] = [];
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first || first.path.length) return null;
    if (first.code === "invalid_type") types.push(article(first.expected));
    else if (first.code === "invalid_value") types.push(quoteList(first.values));
    else return null;
  }
  return [...new Set(types)];
}

/** The issue to report: for a union whose options failed deeper inside, the option that got furthest. */
function leafIssue(issue: Issue): Issue {
  if (issue.code !== "invalid_union" || unionTypes(issue)) return issue;
  const best = [...issue.errors].sort((a, b) => (b[0]?.path.length ?? 0) - (a[0]?.path.length ?? 0))[0]?.[0];
  return best ? leafIssue({ ...best, path: [...issue.path, ...best.path] } as Issue) : issue;
}

/** What is wrong and what is expected, for one issue at `name` (a quoted field, or "The request body"). */
function sentence(issue: Issue, name: string): string {
  switch (issue.code) {
    case "invalid_type": {
      if (!isDefaultMessage(issue.message)) break; // a schema's own message ("'to' is required: an ISO 8601 ...")
      const got = receivedOf(issue);
      if (got === "undefined") return `${name} is required: ${article(issue.expected)}`;
      return `${name} must be ${article(issue.expected)}${got ? `, not ${article(got)}` : ""}`;
    }
    case "invalid_union": {
      // A discriminated union whose tag matched no option (`role: "wizard"`): name the tags it takes.
      const tags = !issue.errors.length && "options" in issue && Array.isArray(issue.options) ? (issue.options as unknown[]) : null;
      if (tags?.length) return `${name} must be one of ${quoteList(tags)}`;
      const types = unionTypes(issue) ?? [];
      const list = types.length > 1 ? `${types.slice(0, -1).join(", ")} or ${types[types.length - 1]}` : (types[0] ?? "another value");
      const missing = issue.errors.every((b) => b[0] && receivedOf(b[0]) === "undefined");
      return missing ? `${name} is required: ${list}` : `${name} must be ${list}`;
    }
    case "invalid_value":
      return issue.values.length === 1 ? `${name} must be ${quoteList(issue.values)}` : `${name} must be one of ${quoteList(issue.values)}`;
    case "too_small": {
      if (!isDefaultMessage(issue.message)) break;
      const min = Number(issue.minimum);
      if (issue.origin === "string") return min <= 1 ? `${name} must not be empty` : `${name} must be at least ${min} characters long`;
      if (issue.origin === "array" || issue.origin === "set") return `${name} needs at least ${min} item${min === 1 ? "" : "s"}`;
      return `${name} must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}`;
    }
    case "too_big": {
      if (!isDefaultMessage(issue.message)) break;
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `${name} must be at most ${max} characters long`;
      if (issue.origin === "array" || issue.origin === "set") return `${name} takes at most ${max} item${max === 1 ? "" : "s"}`;
      return `${name} must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`;
    }
    case "invalid_format":
      if (!/^Invalid /.test(issue.message)) break; // zod's own: "Invalid URL", "Invalid string: must match ..."
      return `${name} must be a valid ${issue.format === "regex" ? "value" : issue.format}${issue.format === "regex" && "pattern" in issue ? ` (matching ${String(issue.pattern)})` : ""}`;
    default:
      break;
  }
  if (isDefaultMessage(issue.message)) return `${name} is not valid: ${issue.message}`;
  // A schema's own message is kept as written; it is prefixed with the field unless it names it first.
  return issue.message.startsWith(name) ? issue.message : `${name}: ${issue.message}`;
}

/**
 * First issue of a zod error as a sentence a person can act on (what is missing or wrong, and what
 * is expected: "'input' is required: a string or an array") plus the dotted path for `param`.
 */
export function describeZodError(error: ZodError): { message: string; param: string | null } {
  const first = error.issues[0];
  if (!first) return { message: "Invalid request", param: null };
  // `param` stays the path of the issue zod reports (a union's own path); the sentence may name the
  // field deeper inside the option that got furthest.
  const param = first.path.length ? first.path.map(String).join(".") : null;
  const issue = leafIssue(first);
  const at = issue.path.length ? `'${issue.path.map(String).join(".")}'` : "The request body";
  const text = sentence(issue, at);
  return { message: /[.!?]$/.test(text) ? text : `${text}.`, param };
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

/**
 * OpenAPI 3.1 document of the mounted HTTP surface, built from `app.routes`: every concrete
 * method + path becomes an operation, its request schemas are the zod schemas of its `validate`
 * middlewares (converted with zod's own `z.toJSONSchema`, JSON Schema 2020-12 = OpenAPI 3.1's
 * dialect), its words come from OPERATIONS, its security from SECURITY below.
 */
import * as z from "zod";
import { groupOf } from "./groups";
import type { ZodType } from "zod";
import pkg from "../../package.json";
import { OPERATIONS, type OperationInfo } from "./operations";
import { requestSchemaOf, type RequestSchema } from "./request-schema";
import { htmlPage, ruleListResponse, ruleResponse } from "./responses";

/** The part of Hono's `RouterRoute` this module reads. */
export interface MountedRoute {
  method: string;
  path: string;
  handler: unknown;
}

type Json = Record<string, unknown>;

/** Methods documented as operations (`ALL` and `OPTIONS` are middleware, 405 and CORS handlers). */
const DOCUMENTED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Who may call what, by path prefix; the first match wins. `{}` in a list means "or anonymous". */
const SECURITY: ReadonlyArray<readonly [prefix: string, security: ReadonlyArray<Record<string, string[]>>]> = [
  ["/v1/master", [{ masterKey: [] }]],
  ["/v1/admin", [{ adminToken: [] }]],
  ["/api/auth/sign-in", []],
  ["/api", [{ session: [] }]],
  ["/mcp", [{ gatewayKey: [] }, { oauth: [] }]],
  ["/sse", [{ gatewayKey: [] }, { oauth: [] }]],
  ["/messages", [{ gatewayKey: [] }, { oauth: [] }]],
  ["/v1/sessions", [{ platformKey: [] }]],
  ["/v1/models", [{}, { gatewayKey: [] }]],
  ["/v1/providers/metrics", [{}, { gatewayKey: [] }]],
  ["/v1/videos/logs", [{}, { gatewayKey: [] }]],
  ["/v1/", [{ gatewayKey: [] }]],
];

const SECURITY_SCHEMES: Json = {
  gatewayKey: { type: "http", scheme: "bearer", description: "Gateway key `swb_...` (also accepted as `x-api-key`), or an end-user session token `swbs_...` on `/v1/*`" },
  masterKey: { type: "http", scheme: "bearer", description: "Master key `swbm_...` of an organization" },
  platformKey: { type: "http", scheme: "bearer", description: "Platform secret key `sk_...` of an app's backend (mints end-user sessions)" },
  adminToken: { type: "http", scheme: "bearer", description: "The operator's `ADMIN_TOKEN` secret" },
  session: { type: "apiKey", in: "cookie", name: "swb_session", description: "Dashboard session cookie from `POST /api/auth/sign-in`; state-changing requests also send `x-csrf-token`" },
  oauth: {
    type: "oauth2",
    description: "OAuth 2.1 access token for MCP clients (authorization code with PKCE)",
    flows: { authorizationCode: { authorizationUrl: "/oauth/authorize", tokenUrl: "/oauth/token", refreshUrl: "/oauth/token", scopes: {} } },
  },
};

const ERROR_SCHEMA: Json = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "type", "param", "code"],
      properties: {
        message: { type: "string" },
        type: { type: "string" },
        param: { type: ["string", "null"] },
        code: { type: "string" },
      },
    },
  },
};

/** `/v1/master/keys/:id{[a-z]+}` -> `/v1/master/keys/{id}`; also returns the parameter names. */
export function openApiPath(honoPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: path.length > 1 ? path.replace(/\/+$/, "") : path, params };
}

/** JSON Schema 2020-12 of a zod schema as a request would be written (before transforms). */
function jsonSchemaOf(schema: ZodType): Json {
  try {
    const out = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Json;
    delete out.$schema;
    return out;
  } catch {
    // One schema zod cannot express (e.g. a transform-only check) must not take the document down.
    return { description: "validated by the server; not expressible as JSON Schema" };
  }
}

/** Moves `$defs` into components under a prefix and rewrites the references to them. */
function hoistDefs(schema: Json, name: string, components: Json): Json {
  const defs = (schema.$defs ?? {}) as Record<string, Json>;
  delete schema.$defs;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== "object") return node;
    const copy: Json = {};
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === "$ref" && typeof v === "string") {
        copy[k] = v === "#" ? `#/components/schemas/${name}` : v.replace(/^#\/\$defs\//, `#/components/schemas/${name}_`);
      } else copy[k] = rewrite(v);
    }
    return copy;
  };
  for (const [key, def] of Object.entries(defs)) components[`${name}_${key}`] = rewrite(def);
  return rewrite(schema) as Json;
}

function parametersOf(source: RequestSchema, where: "query" | "path"): Json[] {
  const schema = jsonSchemaOf(source.schema);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === "path" || required.has(name),
    ...(typeof s.description === "string" ? { description: s.description } : {}),
    schema: s,
  }));
}

const operationIdOf = (method: string, path: string) =>
  `${method.toLowerCase()}_${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "") || "root"}`;

function securityOf(path: string): ReadonlyArray<Record<string, string[]>> {
  for (const [prefix, security] of SECURITY) if (path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`)) return security;
  return [];
}

/** Concrete routes of an app: one entry per method + path, with all the schemas its middlewares validate. */
export function documentedRoutes(routes: readonly MountedRoute[]): Map<string, { method: string; honoPath: string; schemas: RequestSchema[] }> {
  const out = new Map<string, { method: string; honoPath: string; schemas: RequestSchema[] }>();
  for (const r of routes) {
    const method = r.method.toUpperCase();
    if (!(DOCUMENTED_METHODS as readonly string[]).includes(method) || r.path.includes("*")) continue;
    const key = `${method} ${r.path}`;
    const entry = out.get(key) ?? { method, honoPath: r.path, schemas: [] };
    const tagged = requestSchemaOf(r.handler);
    if (tagged) entry.schemas.push(tagged);
    out.set(key, entry);
  }
  return out;
}

function operationOf(method: string, path: string, pathParams: string[], schemas: RequestSchema[], info: OperationInfo | undefined, components: Json): Json {
  const operationId = operationIdOf(method, path);
  const parameters: Json[] = [];
  for (const s of schemas) {
    if (s.target === "query") parameters.push(...parametersOf(s, "query"));
    if (s.target === "param") parameters.push(...parametersOf(s, "path"));
  }
  for (const name of pathParams) {
    if (!parameters.some((p) => p.in === "path" && p.name === name)) parameters.push({ name, in: "path", required: true, schema: { type: "string" } });
  }
  const bodySchema = schemas.find((s) => s.target === "json" || s.target === "form");
  let requestBody: Json | undefined;
  const body = bodySchema?.schema ?? info?.body;
  if (body) {
    const name = `${operationId}_body`;
    components[name] = hoistDefs(jsonSchemaOf(body), name, components);
    const mediaType = bodySchema?.target === "form" || info?.bodyType ? "application/x-www-form-urlencoded" : "application/json";
    requestBody = { required: true, content: { [mediaType]: { schema: { $ref: `#/components/schemas/${name}` } } } };
  } else if (info?.bodyType) {
    requestBody = { required: true, content: { [info.bodyType]: { schema: { type: "object" } } } };
  }
  const [status, description] = info?.ok ?? (method === "GET" && path.startsWith("/dashboard/") ? [200, "HTML page"] : [200, "OK"]);
  const success: Json = { description };
  const summary = info?.summary ?? derivedSummary(method, path);
  if (status !== 204 && status !== 302) {
    const name = `${operationId}_response`;
    const media = info?.mediaType ?? (path.startsWith("/dashboard/") ? "text/html" : "application/json");
    let schema: Json;
    if (media === "text/html") schema = jsonSchemaOf(htmlPage);
    else if (media === "text/css" || media === "text/javascript") schema = { type: "string", description: media === "text/css" ? "CSS" : "JavaScript" };
    else if (media === "image/x-icon") schema = { type: "string", format: "binary", description: "Icon" };
    else if (media === "application/x-ndjson") schema = { type: "string", description: "One JSON request record per line (NDJSON); `text/csv` when asked for CSV" };
    else {
      const zod = info?.response ?? (/\/iam$/.test(path) ? (method === "GET" ? ruleListResponse : ruleResponse) : /\/iam\/\{ruleId\}$/.test(path) && method !== "DELETE" ? ruleResponse : undefined);
      components[name] = zod ? hoistDefs(jsonSchemaOf(zod), name, components) : { type: "object", additionalProperties: true, description: `${summary}: a JSON object` };
      schema = { $ref: `#/components/schemas/${name}` };
    }
    success.content = { [media]: { schema } };
    if (info?.stream) success.content = { ...(success.content as Json), "text/event-stream": { schema: { type: "string", description: "Server-Sent Events, when the request sets `stream: true`" } } };
  }
  const security = securityOf(path);
  return {
    operationId,
    summary,
    tags: [tagOf(path)],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { [String(status)]: success, default: { $ref: "#/components/responses/Error" } },
    security,
  };
}

const RULE_OWNER: Record<string, string> = { keys: "a key", members: "a member", teams: "a team" };
const PAGE_NAME: Record<string, string> = { keys: "Keys", usage: "Usage", access: "Access rules", organization: "Organization", "sign-in": "Sign-in", accept: "Accept membership" };

/**
 * Summary of an operation OPERATIONS has no line for: IAM rule routes (the same for keys, members
 * and teams, master and session APIs), session routes that mirror a master route, dashboard pages.
 */
function derivedSummary(method: string, path: string): string {
  const iam = /\/(keys|members|teams)\/\{ref\}\/iam(\/\{ruleId\})?$/.exec(path);
  if (iam) {
    const owner = RULE_OWNER[iam[1] ?? ""] ?? "a target";
    const verb = iam[2] ? ({ PATCH: "Update", DELETE: "Delete" } as Record<string, string>)[method] ?? "Read" : method === "GET" ? "List the" : "Add an";
    return `${verb} ${iam[2] || method !== "GET" ? "IAM rule" : "IAM rules"} of ${owner}`;
  }
  if (path.startsWith("/api/")) {
    const master = masterInfo(method, `/v1/master/${path.slice(5)}`);
    if (master) return `${master.summary} (dashboard session)`;
  }
  const page = /^\/dashboard\/([a-z-]+)$/.exec(path);
  if (page) return `Dashboard page: ${PAGE_NAME[page[1] ?? ""] ?? page[1]}`;
  return `${method} ${path}`;
}

/** OPERATIONS by method and OpenAPI path (so `:id` and `:id{pattern}` find the same line). */
const byOpenApiPath = new Map<string, OperationInfo>();
for (const [key, info] of Object.entries(OPERATIONS)) {
  const [m = "", p = ""] = key.split(" ");
  byOpenApiPath.set(`${m} ${openApiPath(p).path}`, info);
}
const masterInfo = (method: string, path: string): OperationInfo | undefined =>
  byOpenApiPath.get(`${method} ${path}`) ?? byOpenApiPath.get(`${method} ${path.replace(/\{[A-Za-z0-9_]+\}/g, "{id}")}`) ?? byOpenApiPath.get(`${method} ${path.replace(/\{[A-Za-z0-9_]+\}/g, "{member}")}`);

/** Groups operations in the reference by what a reader does (src/openapi/groups.ts). */
const tagOf = groupOf;

export function buildOpenApiDocument(routes: readonly MountedRoute[], serverUrl?: string): Json {
  const components: Json = { Error: ERROR_SCHEMA };
  const paths: Record<string, Json> = {};
  for (const { method, honoPath, schemas } of documentedRoutes(routes).values()) {
    const { path, params } = openApiPath(honoPath);
    const info = byOpenApiPath.get(`${method} ${path}`);
    (paths[path] ??= {})[method.toLowerCase()] = operationOf(method, path, params, schemas, info, components);
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: "3.1.0",
    info: {
      title: "Switchboard",
      version: pkg.version,
      description: "OpenAI-compatible LLM gateway: the gateway API (`/v1`), the master API, the operator API, the dashboard session API (`/api`), MCP and OAuth.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths: sorted,
    components: {
      schemas: components,
      responses: { Error: { description: "Error envelope", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

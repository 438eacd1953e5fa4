import { describe, expect, it } from "vitest";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import oas31Schema from "@seriousme/openapi-schema-validator/schemas/v3.1/schema.json";
import { app } from "../src/app";
import { documentedRoutes, openApiPath } from "../src/openapi/document";
import { call } from "./helpers/fixtures";

type Json = Record<string, any>;

/**
 * The pinned validator, with its OpenAPI 3.1 schema handed over as an import (its own loader reads
 * the file from disk, which workerd has not got).
 */
async function validateOpenApi(doc: unknown) {
  const validator = new Validator();
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addFormat("media-range", true);
  (validator as unknown as { ajvValidators: Record<string, unknown> }).ajvValidators["3.1"] = ajv.compile(oas31Schema);
  return validator.validate(doc as Json);
}

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Json;
    expect(doc.openapi).toBe("3.1.0");
    const result = await validateOpenApi(doc);
    expect(result.errors ?? null).toBeNull();
    expect(result.valid).toBe(true);
    // the validator is not a rubber stamp: a parameter without `in`, a dangling $ref
    const broken = structuredClone(doc);
    broken.paths["/v1/models"].get.parameters = [{ name: "x", schema: { type: "string" } }];
    expect((await validateOpenApi(broken)).valid).toBe(false);
    const dangling = structuredClone(doc);
    dangling.paths["/v1/models"].get.responses.default = { $ref: "#/components/responses/Nope" };
    expect((await validateOpenApi(dangling)).valid).toBe(false);
  });

  it("lists every mounted route of app.routes", async () => {
    const doc = (await (await call("/openapi.json")).json()) as Json;
    const missing: string[] = [];
    const mounted = [...documentedRoutes(app.routes).values()];
    for (const { method, honoPath } of mounted) {
      if (!doc.paths[openApiPath(honoPath).path]?.[method.toLowerCase()]) missing.push(`${method} ${honoPath}`);
    }
    expect(missing).toEqual([]);
    // the surface the issue names, so a broken route walk cannot pass with an empty list
    for (const path of ["/v1/chat/completions", "/v1/models", "/v1/images/generations", "/v1/videos", "/v1/moderations", "/", "/v1/master/keys", "/api/keys", "/oauth/token", "/mcp"]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(mounted.length).toBeGreaterThan(50);
  });

  it("documents request bodies and parameters with the schemas that validate them", async () => {
    const doc = (await (await call("/openapi.json")).json()) as Json;
    const bodyOf = (path: string, method: string): Json => {
      const ref: string = doc.paths[path][method].requestBody.content["application/json"].schema.$ref;
      return doc.components.schemas[ref.split("/").pop() as string];
    };
    // master key creation: the validator's zod object (projectId required)
    const createKey = bodyOf("/v1/master/keys", "post");
    expect(createKey.required).toContain("projectId");
    // chat parses its own body: the registry hands over chatRequestSchema
    const chat = bodyOf("/v1/chat/completions", "post");
    expect(chat.properties).toHaveProperty("messages");
    expect(chat.properties).toHaveProperty("model");
    // a validated path parameter and a validated query parameter
    const getKey = doc.paths["/v1/master/keys/{id}"].get;
    expect(getKey.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "id", in: "path", required: true })]));
    const list = doc.paths["/v1/master/keys"].get;
    expect(list.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "projectId", in: "query" })]));
    expect(getKey.security).toEqual([{ masterKey: [] }]);
  });
});

describe("every operation is described", () => {
  it("has a summary of its own and a non-empty success response schema", async () => {
    const doc = (await (await call("/openapi.json")).json()) as Json;
    const resolve = (schema: Json): Json => (typeof schema.$ref === "string" ? doc.components.schemas[schema.$ref.split("/").pop() as string] : schema);
    const bare: string[] = [];
    const empty: string[] = [];
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        operations++;
        if (!op.summary || op.summary === `${method.toUpperCase()} ${path}`) bare.push(`${method} ${path}`);
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          if (status === "default" || status === "204" || status.startsWith("3")) continue;
          const schemas = Object.values((response.content ?? {}) as Record<string, Json>).map((m) => resolve(m.schema ?? {}));
          if (!schemas.length || schemas.some((sc) => !sc || Object.keys(sc).length === 0)) empty.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(operations).toBeGreaterThan(100);
    expect(bare).toEqual([]);
    expect(empty).toEqual([]);
    // the wire formats, from the zod response schemas
    const chat = resolve(doc.paths["/v1/chat/completions"].post.responses["200"].content["application/json"].schema);
    expect(chat.required).toEqual(expect.arrayContaining(["id", "object", "choices", "model"]));
    expect(doc.paths["/v1/chat/completions"].post.responses["200"].content).toHaveProperty("text/event-stream");
    for (const path of ["/v1/messages", "/v1/responses", "/v1/embeddings"]) {
      expect(doc.paths[path].post.summary).not.toBe(`POST ${path}`);
      expect(resolve(doc.paths[path].post.responses["200"].content["application/json"].schema).properties).toBeTruthy();
    }
    expect(resolve(doc.paths["/v1/master/keys/{ref}/iam"].get.responses["200"].content["application/json"].schema).required).toEqual(["rules"]);
    expect(doc.paths["/api/keys/{ref}/iam"].post.summary).toBe("Add an IAM rule of a key");
  });
});

describe("GET /docs", () => {
  it("renders the reference as one HTML page without external resources", async () => {
    const res = await call("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("/v1/chat/completions");
    expect(html).toContain("/v1/master/keys/{id}");
    expect(html).not.toMatch(/<script|src="http|href="http/);
  });

  it("is a standards-mode page whose stylesheet is a file its own CSP allows (no inline style)", async () => {
    const res = await call("/docs");
    const html = await res.text();
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toMatch(/<style|style="/);
    expect(html).toContain('<link rel="stylesheet" href="/docs.css">');
    expect(res.headers.get("content-security-policy")).toContain("style-src 'self'");
    const css = await call("/docs.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toContain("text/css");
    const text = await css.text();
    expect(text).toContain("prefers-color-scheme:dark");
    expect(text).toContain("nav.tags{display:flex");
  });

  it("groups sections by what a reader does (chat and models first, the operator last) and shows body fields as a table", async () => {
    const html = await (await call("/docs")).text();
    const nav = /<nav class="tags"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
    const sections = [...nav.matchAll(/>([^<]+)<\/a>/g)].map((m) => m[1]!);
    expect(sections[0]).toBe("Chat and models");
    expect(sections.at(-1)).toBe("Health, pages and this reference");
    expect(sections.indexOf("Operator (admin API)")).toBe(sections.length - 2);
    for (const pathLike of ["docs", "docs.css", "login", "openapi.json", "admin"]) expect(sections).not.toContain(pathLike);
    // a body's fields: one row per field with its type, not a one-line JSON dump
    expect(html).toMatch(/<table class="fields">[\s\S]*?<code>messages<\/code><\/td><td>array of /);
    expect(html).toMatch(/<td><code>limit<\/code><\/td><td>query<\/td><td><\/td><td>integer/);
  });

  it("shows backticked words as code, never literal backticks", async () => {
    const html = await (await call("/docs")).text();
    expect(html).toContain("<code>/v1</code>");
    expect(html.replace(/<pre>[\s\S]*?<\/pre>/g, "")).not.toContain("`");
  });
});

describe("absolute URLs behind a proxy", () => {
  it("the document's server is PUBLIC_URL when set, never the Host header", async () => {
    const { env } = await import("cloudflare:workers");
    const { createExecutionContext, waitOnExecutionContext } = await import("cloudflare:test");
    const patched = Object.create(env, { PUBLIC_URL: { value: "https://gateway.example.com/", enumerable: true } }) as typeof env;
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request("http://inner-host.internal/openapi.json"), patched, ctx);
    await waitOnExecutionContext(ctx);
    const doc = JSON.stringify(await res.json());
    expect(doc).toContain("https://gateway.example.com");
    expect(doc).not.toContain("inner-host.internal");
  });
});

import { describe, expect, it } from "vitest";
import * as z from "zod";
import { buildOpenApiDocument, openApiPath } from "./document";
import { withRequestSchema } from "./request-schema";

describe("openApiPath", () => {
  it("turns Hono parameters (with patterns) into OpenAPI templates", () => {
    expect(openApiPath("/v1/master/keys/:id")).toEqual({ path: "/v1/master/keys/{id}", params: ["id"] });
    expect(openApiPath("/v1/x/:a{[0-9]+}/y/:b")).toEqual({ path: "/v1/x/{a}/y/{b}", params: ["a", "b"] });
    expect(openApiPath("/")).toEqual({ path: "/", params: [] });
  });
});

describe("buildOpenApiDocument", () => {
  it("takes request schemas from tagged validators and skips middleware-only entries", () => {
    const body = z.object({ name: z.string(), tags: z.array(z.string()).optional() });
    const query = z.object({ limit: z.coerce.number().optional() });
    const handler = () => undefined;
    const doc = buildOpenApiDocument([
      { method: "ALL", path: "*", handler },
      { method: "OPTIONS", path: "/v1/things", handler },
      { method: "POST", path: "/v1/things", handler: withRequestSchema(() => undefined, "json", body) },
      { method: "POST", path: "/v1/things", handler },
      { method: "GET", path: "/v1/things/:id", handler: withRequestSchema(() => undefined, "query", query) },
    ]) as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };
    expect(Object.keys(doc.paths)).toEqual(["/v1/things", "/v1/things/{id}"]);
    expect(Object.keys(doc.paths["/v1/things"] ?? {})).toEqual(["post"]);
    const ref = doc.paths["/v1/things"]?.post.requestBody.content["application/json"].schema.$ref as string;
    expect(doc.components.schemas[ref.split("/").pop() ?? ""]).toMatchObject({ type: "object", required: ["name"] });
    expect(doc.paths["/v1/things/{id}"]?.get.parameters).toEqual([
      expect.objectContaining({ name: "limit", in: "query", required: false }),
      { name: "id", in: "path", required: true, schema: { type: "string" } },
    ]);
  });

  it("hoists recursive definitions into components with rewritten references", () => {
    interface Node { children?: Node[] }
    const node: z.ZodType<Node> = z.lazy(() => z.object({ children: z.array(node).optional() }));
    const doc = buildOpenApiDocument([{ method: "POST", path: "/t", handler: withRequestSchema(() => undefined, "json", z.object({ root: node })) }]);
    const text = JSON.stringify(doc);
    expect(text).not.toContain('"#/$defs/');
    for (const m of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect((doc as { components: { schemas: Record<string, unknown> } }).components.schemas).toHaveProperty(m[1] ?? "");
    }
  });
});

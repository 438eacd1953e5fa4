/**
 * `GET /openapi.json` (the OpenAPI 3.1 document of the mounted routes) and `GET /docs` (the same
 * document rendered as one HTML page: no scripts, no CDN; its stylesheet is `GET /docs.css`).
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-types";
import { gatewayOrigin } from "../env";
import { buildOpenApiDocument, type MountedRoute } from "./document";
import { DOCS_CSS, renderReference } from "./render";

/** `routesOf` is read at request time, so this sub-app may be mounted before the routes it lists. */
export function openApiRoutes(routesOf: () => readonly MountedRoute[]): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/openapi.json", (c) => c.json(buildOpenApiDocument(routesOf(), gatewayOrigin(c.env, c.req.raw))));
  routes.get("/docs", (c) => c.html(renderReference(buildOpenApiDocument(routesOf(), gatewayOrigin(c.env, c.req.raw)))));
  routes.get("/docs.css", (c) => c.body(DOCS_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=300" }));
  return routes;
}

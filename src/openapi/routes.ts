/**
 * `GET /openapi.json` (the OpenAPI 3.1 document of the mounted routes) and `GET /docs` (the same
 * document rendered as one self-contained HTML page: no scripts, no CDN).
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-types";
import { gatewayOrigin } from "../env";
import { buildOpenApiDocument, type MountedRoute } from "./document";
import { renderReference } from "./render";

/** `routesOf` is read at request time, so this sub-app may be mounted before the routes it lists. */
export function openApiRoutes(routesOf: () => readonly MountedRoute[]): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get("/openapi.json", (c) => c.json(buildOpenApiDocument(routesOf(), gatewayOrigin(c.env, c.req.raw))));
  routes.get("/docs", (c) => c.html(renderReference(buildOpenApiDocument(routesOf(), gatewayOrigin(c.env, c.req.raw)))));
  return routes;
}

import { Hono } from "hono";
import type { AppEnv } from "./app-types";
import { onError, notFoundHandler } from "./errors/on-error";
import { requestContext } from "./routes/middleware/request-context";
import { masterRoutes } from "./routes/master";
import { adminRoutes } from "./routes/admin";
import { healthRoutes } from "./routes/health";

/**
 * The HTTP surface. Each concept mounts its own sub-app; keep this file a table of contents.
 */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requestContext);

  // routes:begin (one line per concept; helpers add their own line)
  app.route("/v1/master", masterRoutes);
  app.route("/v1/admin", adminRoutes);
  app.route("/", healthRoutes);
  // routes:end

  app.notFound(notFoundHandler);
  app.onError(onError);
  return app;
}

export const app = createApp();

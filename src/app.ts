import { gatewayOverhead } from "./routes/middleware/overhead";
import { Hono } from "hono";
import type { AppEnv } from "./app-types";
import { onError, notFoundHandler } from "./errors/on-error";
import { requestContext } from "./routes/middleware/request-context";
import { instruments } from "./routes/middleware/instruments";
import { rateLimitHeaders } from "./rate-limits/admission";
import { dashboardRoutes } from "./routes/dashboard";
import { moderationRoutes } from "./routes/moderations";
import { masterRoutes } from "./routes/master";
import { adminRoutes } from "./routes/admin";
import { healthRoutes } from "./routes/health";
import { chatRoutes } from "./routes/chat/route";
import { providerMetricsRoutes } from "./routes/providers-metrics";
import { mcpRoutes } from "./mcp/routes";
import { modelsRoutes } from "./routes/models";
import { imageRoutes } from "./routes/images";
import { oauthRoutes } from "./oauth/routes";
import { videoContentOriginOnly, videoRoutes } from "./routes/videos";
import { dashboardNotFound, dashboardPages, loginRedirect } from "./dashboard/routes";
import { htmlSecurityHeaders } from "./dashboard/security";
import { gatewayCors } from "./routes/middleware/cors";
import { platformSessionRoutes } from "./routes/platform-sessions";
import { openApiRoutes } from "./openapi/routes";
import { messagesRoutes } from "./dialects/anthropic-messages/route";
import { embeddingRoutes } from "./routes/embeddings";
import { responsesRoutes } from "./dialects/openai-responses/route";
import { auditTrail } from "./audit/middleware";
import { ssoPages } from "./routes/sso";
import { staticFileRoutes } from "./dashboard/static-files";
import { PrefixSplitRouter } from "./routes/router";

/**
 * The HTTP surface. Each concept mounts its own sub-app; keep this file a table of contents.
 */
export function createApp(): Hono<AppEnv> {
  // The one path RegExpRouter cannot hold beside the others gets a router of its own (src/routes/router.ts).
  const app = new Hono<AppEnv>({ router: new PrefixSplitRouter("/v1/videos/logs/") });
  // First, so refusals of the request context itself (body limit, content type) carry it too.
  for (const door of ["/v1/chat/*", "/v1/messages", "/v1/messages/*", "/v1/responses", "/v1/responses/*"]) app.use(door, gatewayOverhead);
  app.use("*", requestContext);
  app.use("*", htmlSecurityHeaders);
  app.use("*", videoContentOriginOnly);
  app.use("/v1/*", rateLimitHeaders);
  app.use("/v1/*", gatewayCors);
  // One audit entry per state-changing call of the master, session and operator APIs (src/audit/).
  const audit = auditTrail((request, env, ctx) => app.fetch(request, env, ctx));
  for (const path of ["/v1/master/*", "/v1/admin/*", "/api/*"]) app.use(path, audit);
  // Bench instruments: the pipeline's probe and the bench's answer headers. Innermost, so the
  // headers are read when the handler's answer is ready, as the bench measures. A deployed bundle
  // has none, and no middleware layer for them on every request.
  if (__BENCH_INSTRUMENTS__) app.use("*", instruments);

  // routes:begin (one line per concept; helpers add their own line)
  app.route("/v1/master", masterRoutes);
  app.route("/v1/admin", adminRoutes);
  app.route("/", healthRoutes);
  app.route("/v1/images", imageRoutes);
  app.route("/", oauthRoutes);
  app.route("/v1/videos", videoRoutes);
  app.route("/v1/models", modelsRoutes);
  app.route("/", mcpRoutes);
  app.route("/v1/chat", chatRoutes);
  app.route("/v1/providers/metrics", providerMetricsRoutes);
  app.route("/api", dashboardRoutes);
  app.route("/v1/moderations", moderationRoutes);
  app.route("/", staticFileRoutes);
  app.route("/dashboard/sso", ssoPages);
  app.route("/dashboard", dashboardPages);
  app.route("/login", loginRedirect);
  app.route("/", openApiRoutes(() => app.routes));
  app.route("/v1/messages", messagesRoutes);
  app.route("/v1/embeddings", embeddingRoutes);
  app.route("/v1/responses", responsesRoutes);
  app.route("/v1/sessions", platformSessionRoutes);
  // routes:end

  app.notFound((c) => (c.req.path.startsWith("/dashboard/") ? dashboardNotFound(c) : notFoundHandler(c)));
  app.onError(onError);
  return app;
}

export const app = createApp();

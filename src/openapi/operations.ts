import type { ZodType } from "zod";
import { chatRequestSchema } from "../routes/chat/schema";
import { STATIC_FILES } from "../dashboard/generated/static-files";
import { chatCompletionResponse, countTokensResponse, embeddingsResponse, imagesResponse, messagesResponse, modelListResponse, modelResponse, moderationResponse, responsesResponse } from "./responses";

/**
 * Words for the OpenAPI document: one line per route, keyed `"METHOD /path"` with Hono's path
 * syntax (`:id`). Request schemas are NOT listed here: they come from the `validate(...)`
 * middlewares found on `app.routes` (src/openapi/request-schema.ts). `body` is only for routes that
 * parse their body by hand (chat). A route missing here still appears, with a generated summary;
 * adding a line gives it a better one.
 */
export interface OperationInfo {
  summary: string;
  /** Success status and what it returns (default `200`, "OK"). */
  ok?: readonly [status: number, description: string];
  /** Request body for handlers that parse it themselves. */
  body?: ZodType;
  /** Body media type when not JSON (OAuth endpoints take forms). */
  bodyType?: "application/x-www-form-urlencoded";
  /** Streams Server-Sent Events when the request asks for it. */
  stream?: boolean;
  /** Success body (src/openapi/responses.ts); without it, a described JSON object. */
  response?: ZodType;
  /** Answers with an HTML page (or another non-JSON type). */
  mediaType?: "text/html" | "text/css" | "text/javascript" | "image/x-icon" | "application/x-ndjson";
}

/** A static file's route: its media type is its content type without parameters (`; charset=...`). */
function staticFileOperation(contentType: string): OperationInfo {
  const mediaType = contentType.split(";")[0] as OperationInfo["mediaType"];
  return { summary: `Dashboard static file (${mediaType}), revalidated by ETag (304)`, ok: [200, "The file"], mediaType };
}

export const OPERATIONS: Readonly<Record<string, OperationInfo>> = {
  // operations:begin (one line per route; helpers add theirs)
  "GET /": { summary: "Health check (database and counters); `?skip=redis,database` skips checks", ok: [200, "healthy (503 when a check fails)"] },
  "GET /health": { summary: "The health check of `GET /` at the path load balancers guess", ok: [200, "healthy (503 when a check fails)"] },
  "GET /v1/health": { summary: "The health check of `GET /` under the API prefix", ok: [200, "healthy (503 when a check fails)"] },
  "POST /v1/chat/completions": { summary: "Chat completion (OpenAI Chat Completions wire format)", body: chatRequestSchema, stream: true, response: chatCompletionResponse },
  "GET /v1/models": { summary: "Model catalogue with capabilities and prices (public; a key narrows it to what the key may use)", response: modelListResponse },
  "GET /v1/models/:id": { summary: "One catalogue model by id or alias", response: modelResponse },
  "POST /v1/images/generations": { summary: "Generate images", response: imagesResponse },
  "POST /v1/videos": { summary: "Start a video generation job" },
  "GET /v1/videos/:id": { summary: "Video job status" },
  "GET /v1/videos/logs/:log_id/content": { summary: "Download a finished video (signed `token` link or a gateway key)" },
  "POST /v1/moderations": { summary: "Moderation (OpenAI moderations wire format)", response: moderationResponse },
  "GET /v1/providers/metrics": { summary: "Live uptime, throughput and latency per provider" },
  "POST /v1/admin/organizations": { summary: "Bootstrap an organization with its owner, default project, master key and playground key", ok: [201, "created; secrets are shown only here"] },
  "GET /v1/master/organization": { summary: "The master key's organization" },
  "PATCH /v1/master/organization": { summary: "Update compliance and notification settings" },
  "POST /v1/master/projects": { summary: "Create a project", ok: [201, "created"] },
  "GET /v1/master/projects": { summary: "List projects" },
  "GET /v1/master/projects/:id": { summary: "Get a project" },
  "PATCH /v1/master/projects/:id": { summary: "Update a project" },
  "DELETE /v1/master/projects/:id": { summary: "Delete a project and its keys" },
  "POST /v1/master/members": { summary: "Add a member", ok: [201, "created"] },
  "GET /v1/master/members": { summary: "List members" },
  "GET /v1/master/members/:member": { summary: "Get a member by id or e-mail" },
  "PATCH /v1/master/members/:member": { summary: "Change a member's role (an organization keeps one owner)" },
  "DELETE /v1/master/members/:member": { summary: "Remove a member (not one who created keys, not the last owner)" },
  "POST /v1/master/teams": { summary: "Create a team", ok: [201, "created"] },
  "GET /v1/master/teams": { summary: "List teams" },
  "GET /v1/master/teams/:id": { summary: "Get a team" },
  "POST /v1/master/teams/:id/members": { summary: "Add a member to a team" },
  "DELETE /v1/master/teams/:id/members/:member": { summary: "Remove a member (id or e-mail) from a team; its rules stop applying to their keys" },
  "POST /v1/master/keys": { summary: "Create a gateway key", ok: [201, "created; the secret is shown only here"] },
  "GET /v1/master/keys": { summary: "List gateway keys" },
  "GET /v1/master/keys/:id": { summary: "Get a gateway key with live usage" },
  "PATCH /v1/master/keys/:id": { summary: "Update a gateway key (description, status, spend limits)" },
  "DELETE /v1/master/keys/:id": { summary: "Soft-delete a gateway key" },
  "POST /v1/master/provider-keys": { summary: "Store a provider key (BYOK)", ok: [201, "created"] },
  "GET /v1/master/provider-keys": { summary: "List provider keys (hints only)" },
  "PATCH /v1/master/provider-keys/:id": { summary: "Edit a provider key in place (new token, base URL, label; the token is never returned)" },
  "DELETE /v1/master/provider-keys/:id": { summary: "Delete a provider key" },
  "POST /v1/master/custom-providers": { summary: "Add an OpenAI-compatible custom provider", ok: [201, "created"] },
  "GET /v1/master/custom-providers": { summary: "List custom providers" },
  "POST /v1/master/custom-models": { summary: "Add a model of a custom provider", ok: [201, "created"] },
  "GET /v1/master/custom-models": { summary: "List custom models" },
  "POST /v1/master/master-keys": { summary: "Create a master key", ok: [201, "created; the secret is shown only here"] },
  "GET /v1/master/master-keys": { summary: "List master keys (prefix, creator, last use, status)" },
  "POST /v1/master/master-keys/:id/roll": { summary: "Roll a master key: a new secret, the old one refused at once" },
  "DELETE /v1/master/master-keys/:id": { summary: "Revoke a master key (409 for the last active one)" },
  "POST /v1/admin/organizations/:id/master-keys": { summary: "Create a master key for an organization (operator recovery)", ok: [201, "created; the secret is shown only here"] },
  "GET /v1/admin/organizations/:id/master-keys": { summary: "List an organization's master keys" },
  "GET /api/master-keys": { summary: "List master keys (owners)" },
  "POST /api/master-keys": { summary: "Create a master key (owners)", ok: [201, "created; the secret is shown only here"] },
  "POST /api/master-keys/:id/roll": { summary: "Roll a master key (owners)" },
  "DELETE /api/master-keys/:id": { summary: "Revoke a master key (owners; 409 for the last active one)" },
  "POST /v1/admin/organizations/:id/credits": { summary: "Add credits to an organization (negative amount: a correction), once per idempotency key", ok: [201, "entry added (200: the key was already used, the same entry)"] },
  "GET /v1/admin/organizations/:id/credits": { summary: "An organization's credit balance and ledger" },
  "PATCH /v1/admin/organizations/:id/rate-limits": { summary: "Set the most an organization may set for its own rate limits (null: its plan's)" },
  "GET /v1/master/credits": { summary: "The organization's credit balance and ledger (top-ups and corrections)" },
  "GET /api/organization/credits": { summary: "Credit balance and ledger (owners and admins)" },
  "POST /v1/master/platform-keys": { summary: "Create a platform secret key (sk_) for a project", ok: [201, "created; the secret is shown only here"] },
  "GET /v1/master/platform-keys": { summary: "List platform secret keys (prefix, project, last use, active sessions)" },
  "POST /v1/master/platform-keys/:id/roll": { summary: "Roll a platform secret key: a new secret, the old one refused at once" },
  "DELETE /v1/master/platform-keys/:id": { summary: "Revoke a platform secret key and every session it minted" },
  "GET /v1/master/end-user-sessions": { summary: "List end-user sessions (filter by end user, project)" },
  "DELETE /v1/master/end-user-sessions/:id": { summary: "Revoke one end-user session" },
  "DELETE /v1/master/end-user-sessions": { summary: "Revoke every session of an end user (`?endUserId=`)" },
  "GET /v1/master/end-users/usage": { summary: "Usage by end user (requests, tokens, cost) from the analytics store" },
  "POST /v1/sessions": { summary: "Mint an end-user session token (platform secret key)", ok: [201, "created; the token is shown only here"] },
  "GET /v1/sessions": { summary: "List the sessions of the platform key's project" },
  "DELETE /v1/sessions/:id": { summary: "Revoke one end-user session" },
  "DELETE /v1/sessions": { summary: "Revoke every session of an end user (`?endUserId=`)" },
  "GET /api/platform-keys": { summary: "List platform secret keys (owners and admins)" },
  "POST /api/platform-keys": { summary: "Create a platform secret key (owners and admins)", ok: [201, "created; the secret is shown only here"] },
  "POST /api/platform-keys/:id/roll": { summary: "Roll a platform secret key (owners and admins)" },
  "DELETE /api/platform-keys/:id": { summary: "Revoke a platform secret key and its sessions (owners and admins)" },
  "DELETE /api/end-user-sessions/:id": { summary: "Revoke one end-user session (owners and admins)" },
  "DELETE /api/end-user-sessions": { summary: "Revoke every session of an end user (owners and admins)" },
  "POST /api/auth/sign-in": { summary: "Dashboard sign-in (sets the session cookie, returns the CSRF token)" },
  "POST /api/auth/sign-out": { summary: "Dashboard sign-out", ok: [204, "signed out"] },
  "GET /api/me": { summary: "The signed-in user, organization, role and CSRF token" },
  "GET /api/keys": { summary: "List the keys the session may manage" },
  "POST /api/keys": { summary: "Create a key (with TTL)", ok: [201, "created; the secret is shown only here"] },
  "POST /api/keys/:id/roll": { summary: "Roll a key's secret" },
  "GET /api/notifications": { summary: "Budget alerts, newest first" },
  "POST /mcp": { summary: "MCP Streamable HTTP endpoint (JSON-RPC)" },
  "GET /mcp": { summary: "MCP server information (JSON) or connection instructions (HTML)" },
  "GET /sse": { summary: "Legacy MCP HTTP+SSE transport: open a session" },
  "POST /messages": { summary: "Legacy MCP HTTP+SSE transport: send a message", ok: [202, "accepted; the reply arrives on the stream"] },
  "GET /.well-known/oauth-authorization-server": { summary: "OAuth authorization server metadata (RFC 8414)" },
  "GET /.well-known/oauth-protected-resource": { summary: "OAuth protected resource metadata (RFC 9728)" },
  "POST /oauth/register": { summary: "OAuth dynamic client registration (RFC 7591)", ok: [201, "registered"] },
  "GET /oauth/authorize": { summary: "OAuth consent page", ok: [200, "HTML consent page"], mediaType: "text/html" },
  "POST /oauth/authorize": { summary: "OAuth consent decision", bodyType: "application/x-www-form-urlencoded", ok: [302, "redirect to the client"] },
  "POST /oauth/token": { summary: "OAuth token endpoint (authorization_code with PKCE, refresh_token)", bodyType: "application/x-www-form-urlencoded" },
  "POST /oauth/revoke": { summary: "OAuth token revocation (RFC 7009)", bodyType: "application/x-www-form-urlencoded" },
  "GET /openapi.json": { summary: "This document" },
  "GET /docs": { summary: "Rendered API reference", ok: [200, "HTML page"], mediaType: "text/html" },
  "GET /docs.css": { summary: "Stylesheet of the rendered API reference", mediaType: "text/css" },
  "POST /v1/embeddings": { summary: "Embeddings (OpenAI embeddings wire format)", response: embeddingsResponse },
  "POST /v1/responses": { summary: "Model response (OpenAI Responses wire format)", stream: true, response: responsesResponse },
  "POST /v1/messages": { summary: "Message (Anthropic Messages wire format; `x-api-key` or bearer gateway key)", stream: true, response: messagesResponse },
  "POST /v1/messages/count_tokens": { summary: "Count the input tokens of a Messages request (Anthropic wire format)", response: countTokensResponse },
  "GET /.well-known/oauth-protected-resource/mcp": { summary: "OAuth protected resource metadata of the MCP endpoint (RFC 9728)" },
  "GET /v1/master/custom-models/:id": { summary: "Get a custom model" },
  "PATCH /v1/master/custom-models/:id": { summary: "Update a custom model" },
  "DELETE /v1/master/custom-models/:id": { summary: "Delete a custom model" },
  "GET /v1/master/custom-providers/:id": { summary: "Get a custom provider" },
  "PATCH /v1/master/custom-providers/:id": { summary: "Update a custom provider (base URL, key)" },
  "DELETE /v1/master/custom-providers/:id": { summary: "Delete a custom provider and its models" },
  "POST /v1/master/members/:member/invitation": { summary: "Send a pending member a new invitation e-mail" },
  "POST /api/memberships/preview": { summary: "What an invitation token grants (organization, role, e-mail)" },
  "POST /api/memberships/accept": { summary: "Accept an invitation (sets a password for a new user)" },
  "GET /api/keys/:id": { summary: "Get a key the session may manage" },
  "PATCH /api/keys/:id": { summary: "Update a key (description, status, limits, expiry)" },
  "DELETE /api/keys/:id": { summary: "Delete a key" },
  "DELETE /api/teams/:id/members/:ref": { summary: "Remove a member (id or e-mail) from a team (dashboard session)" },
  "GET /login": { summary: "Redirect to the dashboard sign-in page", ok: [302, "redirect"] },
  "GET /dashboard": { summary: "Redirect to the dashboard's Keys page", ok: [302, "redirect"] },
  "GET /v1/master/logs/:requestId": { summary: "One request record by its x-request-id, with `requestBody` and `responseBody` when the project keeps bodies and `bodiesStatus` (stored, pending, dropped) when it did (`?at=` for requests older than the window)" },
  "POST /v1/master/webhooks": { summary: "Create a webhook (`url`, `events`); the `whsec_` signing secret is shown once", ok: [201, "created"] },
  "GET /v1/master/webhooks": { summary: "List webhooks (never their secrets)" },
  "DELETE /v1/master/webhooks/:id": { summary: "Delete a webhook" },
  "POST /v1/master/webhooks/:id/test": { summary: "Send a `webhook.test` event to a webhook", ok: [202, "queued"] },
  "GET /v1/master/webhooks/:id/deliveries": { summary: "A webhook's delivery log (status, attempts, response code), newest first" },
  "GET /v1/master/audit-log": { summary: "The organization's audit log, newest first: one entry per state-changing call (`from`, `to`, `limit`, `cursor`, `action`; `format=csv` exports)" },
  "GET /api/audit-log": { summary: "The audit log for the dashboard (owners and admins), as `GET /v1/master/audit-log`" },
  "GET /v1/master/sso": { summary: "The organization's single sign-on (OpenID Connect) configuration, never its client secret (`{sso: null}` when none)" },
  "PUT /v1/master/sso": { summary: "Configure single sign-on: `issuer`, `clientId`, `clientSecret` (kept when left out later), `allowedDomains`, `defaultRole`, `required`, `breakGlassMemberId`" },
  "DELETE /v1/master/sso": { summary: "Remove single sign-on; members sign in with their passwords again" },
  "GET /api/sso": { summary: "Single sign-on configuration for the dashboard (owners only), as `GET /v1/master/sso`" },
  "PUT /api/sso": { summary: "Configure single sign-on from the dashboard (owners only), as `PUT /v1/master/sso`" },
  "DELETE /api/sso": { summary: "Remove single sign-on from the dashboard (owners only)" },
  "GET /dashboard/sso/start": { summary: "Sign in with SSO: finds the organization by `email`'s domain (or `organization`) and hands the browser to its identity provider (at most 50 per client IP per 15 minutes, then 429)", mediaType: "text/html" },
  "GET /dashboard/sso/callback": { summary: "The SSO redirect URI: checks the provider's answer and opens a dashboard session (303 to the dashboard; at most 50 per client IP per 15 minutes, then 429)", ok: [303, "signed in"], mediaType: "text/html" },
  "GET /v1/master/logs": { summary: "Raw request records of a period (`from`, `to`; at most 31 days) as NDJSON, or CSV with `Accept: text/csv`", mediaType: "application/x-ndjson" },
  "POST /v1/admin/usage/rebuild": { summary: "Rebuild one closed hour's usage aggregates from its raw records in R2 (`?hour=`)" },
  "GET /dashboard/requests/:id": { summary: "Dashboard page: one request's detail (ids, tokens, cost, routing attempts, metadata)", mediaType: "text/html" },
  "GET /dashboard/usage/download": { summary: "Download a period's request records (NDJSON, or `format=csv`) from the dashboard", mediaType: "application/x-ndjson" },
  "GET /v1/master/members/:member/limits": { summary: "A member's spending limits (all-time and recurring), applied to every key the member owns" },
  "PATCH /v1/master/members/:member/limits": { summary: "Set or clear a member's spending limits (`null` clears one)" },
  "GET /v1/master/teams/:id/limits": { summary: "A team's spending limits, applied to each of its members on their own spend" },
  "PATCH /v1/master/teams/:id/limits": { summary: "Set or clear a team's spending limits (`null` clears one)" },
  "PATCH /api/members/:ref/limits": { summary: "Set or clear a member's spending limits (dashboard session)" },
  "PATCH /api/teams/:id/limits": { summary: "Set or clear a team's spending limits (dashboard session)" },
  "GET /api/projects": { summary: "Projects of the organization" },
  "POST /api/projects": { summary: "Create a project (owners, admins)", ok: [201, "created"] },
  "GET /api/projects/:id": { summary: "Get a project" },
  "PATCH /api/projects/:id": { summary: "Change a project: name, mode, cache, bodies, routing defaults (owners, admins)" },
  "DELETE /api/projects/:id": { summary: "Delete a project and its keys (owners, admins)" },
  "POST /api/playground/chat/completions": { summary: "Dashboard playground: a chat completion as the project's playground key", body: chatRequestSchema, stream: true, response: chatCompletionResponse },
  // operations:end
  // The dashboard's static files (src/dashboard/static-files.ts), one route each.
  ...Object.fromEntries(Object.entries(STATIC_FILES).map(([path, file]) => [`GET ${path}`, staticFileOperation(file.type)])),
};

/**
 * What an audit entry says about a state-changing call, derived from the route it matched, so a
 * route added later is audited without a table to keep in step (the test over `app.routes` checks
 * every such route gets a name). `<resource>.<verb>` as the contract spells it: `key.create`,
 * `key.roll`, `iam_rule.create`, `credits.top_up`, `organization.update`.
 */

export interface AuditAction {
  action: string;
  targetType: string;
  /** The route parameter that names the target, when the path has one. */
  targetParam: string | null;
}

/** Route prefixes whose state-changing calls are audited, and the part of the path they own. */
export const AUDITED_PREFIXES = ["/v1/master", "/v1/admin", "/api"] as const;

/**
 * Session-API calls that change no organization's state (signing in is not an organization change;
 * a playground chat is a request like any on /v1, kept in the request log).
 */
const NOT_AUDITED = new Set(["POST /api/auth/sign-in", "POST /api/auth/sign-out", "POST /api/memberships/preview", "POST /api/memberships/accept", "POST /api/playground/chat/completions"]);

/** Trailing path words that are verbs on the resource before them (`POST /keys/:id/roll`). */
const VERB_WORDS: Record<string, string> = { roll: "roll", test: "test", invitation: "invite", rebuild: "rebuild" };

/** Paths whose generic name would mislead. */
const OVERRIDES: Record<string, Omit<AuditAction, "targetParam"> & { targetParam?: string | null }> = {
  "POST /v1/admin/organizations/:id/credits": { action: "credits.top_up", targetType: "organization", targetParam: "id" },
  "POST /v1/admin/organizations/:id/master-keys": { action: "master_key.create", targetType: "organization", targetParam: "id" },
  "PATCH /v1/admin/organizations/:id/rate-limits": { action: "organization_rate_limits.update", targetType: "organization", targetParam: "id" },
  "POST /v1/master/teams/:id/members": { action: "team_member.create", targetType: "team", targetParam: "id" },
  "DELETE /v1/master/teams/:id/members/:member": { action: "team_member.delete", targetType: "team", targetParam: "id" },
  "POST /api/teams/:id/members": { action: "team_member.create", targetType: "team", targetParam: "id" },
  "DELETE /api/teams/:id/members/:ref": { action: "team_member.delete", targetType: "team", targetParam: "id" },
};

const VERB_OF_METHOD: Record<string, string> = { POST: "create", PUT: "update", PATCH: "update", DELETE: "delete" };

export const isStateChangingMethod = (method: string): boolean => method in VERB_OF_METHOD;

/** `provider-keys` -> `provider_key`, `iam-rules` -> `iam_rule`; `credits` stays (a balance, not items). */
/** Path words that name their resource differently (`/keys/:ref/iam` holds IAM rules). */
const RESOURCE_OF_WORD: Record<string, string> = { iam: "iam_rule" };

function singular(word: string): string {
  const named = RESOURCE_OF_WORD[word];
  if (named) return named;
  const snake = word.replace(/-/g, "_");
  if (snake === "credits" || snake === "limits" || snake === "usage") return snake === "limits" ? "limit" : snake;
  return snake.endsWith("s") ? snake.slice(0, -1) : snake;
}

/** The action of a state-changing call on `routePath` (Hono's matched path), or null when not audited. */
export function describeCall(method: string, routePath: string): AuditAction | null {
  const verbOfMethod = VERB_OF_METHOD[method];
  if (!verbOfMethod) return null;
  const key = `${method} ${routePath}`;
  if (NOT_AUDITED.has(key)) return null;
  const prefix = AUDITED_PREFIXES.find((p) => routePath === p || routePath.startsWith(`${p}/`));
  if (!prefix) return null;
  const override = OVERRIDES[key];
  if (override) return { targetParam: null, ...override };

  const segments = routePath.slice(prefix.length).split("/").filter(Boolean);
  const isParam = (s: string | undefined) => s !== undefined && s.startsWith(":");
  const literals = segments.filter((s) => !isParam(s));
  const last = segments.at(-1);
  const lastLiteral = literals.at(-1) ?? "organization";
  const paramName = (s: string | undefined) => (s === undefined ? null : s.slice(1));

  // `/keys/:id/roll`: a verb on the resource before it.
  const verbWord = VERB_WORDS[lastLiteral];
  if (verbWord && !isParam(last) && literals.length >= 2) {
    const resource = singular(literals.at(-2) ?? lastLiteral);
    const param = segments[segments.length - 2];
    return { action: `${resource}.${verbWord}`, targetType: resource, targetParam: isParam(param) ? paramName(param) : null };
  }
  // `/members/:member/limits`: limits of the resource before them.
  if (lastLiteral === "limits" && literals.length >= 2) {
    const owner = singular(literals.at(-2) ?? "");
    const param = segments[segments.length - 2];
    return { action: `${owner}_limits.update`, targetType: owner, targetParam: isParam(param) ? paramName(param) : null };
  }
  const resource = singular(lastLiteral);
  return { action: `${resource}.${verbOfMethod}`, targetType: resource, targetParam: isParam(last) ? paramName(last) : null };
}

/** Field names whose string values are secrets or credentials, and objects of header values. */
const SECRET_FIELD = /secret|password|token|api_?key|^key$|authorization|credential/i;
const HEADER_FIELD = /headers$/i;
/** Values that look like one of our secrets whatever their field (gateway, master, platform, session keys, webhook secrets). */
const SECRET_VALUE = /^(swb_|swbm_|swbs_|sk_|whsec_)/;

/** A copy of a JSON value with every secret replaced (depth-bounded). */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return "[truncated]";
  if (typeof value === "string") return SECRET_VALUE.test(value) ? "[redacted]" : value;
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => redact(v, depth + 1));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && HEADER_FIELD.test(k)) out[k] = "[redacted]";
    else if (typeof v === "string" && SECRET_FIELD.test(k)) out[k] = "[redacted]";
    else out[k] = redact(v, depth + 1);
  }
  return out;
}

/** The id of what a create made, from its answer (`{key: {id}}`, `{rule: {id}}`, `{id}`). */
export function createdId(body: unknown): string | null {
  if (body === null || typeof body !== "object") return null;
  const top = body as Record<string, unknown>;
  if (typeof top.id === "string") return top.id;
  for (const v of Object.values(top)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof (v as Record<string, unknown>).id === "string") return (v as Record<string, string>).id ?? null;
  }
  return null;
}

/**
 * App attribution (spec 5.6): the `x-source` header, else a recognised coding client by
 * User-Agent, else `unknown` (`mcp` for MCP tool calls). Known aliases of recognised clients are merged to one id (at recording time here, and
 * again by analytics when ranking, so rows recorded under an alias still count for the app).
 */
const USER_AGENT_APPS: ReadonlyArray<readonly [RegExp, string]> = [
  [/claude-code|claude-cli/i, "claude-code"],
  [/cursor/i, "cursor"],
  [/roo-?code|roo-cline/i, "roo-code"],
  [/cline/i, "cline"],
  [/codex/i, "codex-cli"],
  [/opencode/i, "opencode"],
  [/aider/i, "aider"],
  [/kilo-?code/i, "kilo-code"],
  [/continue/i, "continue"],
  [/windsurf|codeium/i, "windsurf"],
  [/zed\//i, "zed"],
  [/gemini-?cli/i, "gemini-cli"],
  [/githubcopilot|copilot-/i, "github-copilot"],
  [/\bgoose\b/i, "goose"],
];

/** Aliases callers put in x-source that mean the same app. */
const APP_ALIASES: Readonly<Record<string, string>> = {
  "claude code": "claude-code",
  claude_code: "claude-code",
  claudecode: "claude-code",
  "claude-cli": "claude-code",
  "cursor-ide": "cursor",
  "roo code": "roo-code",
  roocode: "roo-code",
  "roo-cline": "roo-code",
  "codex": "codex-cli",
  "openai-codex": "codex-cli",
  "codex cli": "codex-cli",
  "open-code": "opencode",
  "aider-chat": "aider",
  "kilo code": "kilo-code",
  kilocode: "kilo-code",
  codeium: "windsurf",
  "": "unknown",
};

/** Human names of the recognised apps (analytics display names). */
const APP_NAMES: Readonly<Record<string, string>> = {
  "claude-code": "Claude Code",
  cursor: "Cursor",
  "roo-code": "Roo Code",
  cline: "Cline",
  "codex-cli": "Codex CLI",
  opencode: "OpenCode",
  aider: "Aider",
  "kilo-code": "Kilo Code",
  continue: "Continue",
  windsurf: "Windsurf",
  zed: "Zed",
  "gemini-cli": "Gemini CLI",
  "github-copilot": "GitHub Copilot",
  goose: "Goose",
  mcp: "MCP",
  playground: "Playground",
  unknown: "Unknown",
};

export const UNKNOWN_APP = "unknown";
/** Requests made through the gateway's MCP server by a client that names no app. */
export const MCP_APP = "mcp";
/** Requests sent from the dashboard's playground page. */
export const PLAYGROUND_APP = "playground";

/** Longest custom app name kept (characters). */
export const MAX_APP_NAME = 100;

/**
 * Known aliases and ids of recognised clients (any case) become the client's id; custom names stay
 * as sent, only trimmed and bounded (spec 2.8: `MyApp` and `myapp` are two apps).
 */
export function normalizeAppName(name: string): string {
  const trimmed = name.trim();
  const lower = trimmed.toLowerCase();
  // Own keys only: `constructor` or `toString` are custom names, not Object.prototype members.
  const known = Object.hasOwn(APP_ALIASES, lower) ? APP_ALIASES[lower] : Object.hasOwn(APP_NAMES, lower) ? lower : undefined;
  return known ?? trimmed.slice(0, MAX_APP_NAME);
}

/** Display name of an app id; custom names stay as recorded. */
export function appDisplayName(id: string): string {
  return Object.hasOwn(APP_NAMES, id) ? APP_NAMES[id]! : id;
}

/** A client sends the same User-Agent on every request: match each one once per isolate. */
const byUserAgent = new Map<string, string>();
const MAX_REMEMBERED_AGENTS = 512;

function appOfUserAgent(ua: string): string {
  const hit = byUserAgent.get(ua);
  if (hit !== undefined) return hit;
  let app = UNKNOWN_APP;
  for (const [re, id] of USER_AGENT_APPS) {
    if (re.test(ua)) {
      app = id;
      break;
    }
  }
  if (byUserAgent.size >= MAX_REMEMBERED_AGENTS) byUserAgent.clear();
  byUserAgent.set(ua, app);
  return app;
}

export function detectSourceApp(headers: Headers): string {
  const source = headers.get("x-source");
  if (source && source.trim()) return normalizeAppName(source);
  return appOfUserAgent(headers.get("user-agent") ?? "");
}

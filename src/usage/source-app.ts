/**
 * App attribution (spec 5.6): the `x-source` header, else a recognised coding client by
 * User-Agent, else `unknown`. Known aliases are merged to one id.
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
];

/** Aliases callers put in x-source that mean the same app. */
const APP_ALIASES: Readonly<Record<string, string>> = {
  "claude code": "claude-code",
  claude_code: "claude-code",
  claudecode: "claude-code",
  "cursor-ide": "cursor",
  "roo code": "roo-code",
  roocode: "roo-code",
  "roo-cline": "roo-code",
  "codex": "codex-cli",
  "openai-codex": "codex-cli",
  "open-code": "opencode",
  "aider-chat": "aider",
};

export function normalizeAppName(name: string): string {
  const lower = name.trim().toLowerCase();
  return APP_ALIASES[lower] ?? lower;
}

export function detectSourceApp(headers: Headers): string {
  const source = headers.get("x-source");
  if (source && source.trim()) return normalizeAppName(source).slice(0, 100);
  const ua = headers.get("user-agent") ?? "";
  for (const [re, app] of USER_AGENT_APPS) if (re.test(ua)) return app;
  return "unknown";
}

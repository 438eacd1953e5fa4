import { describe, expect, it } from "vitest";
import { appDisplayName, detectSourceApp, normalizeAppName } from "./source-app";

describe("source app attribution", () => {
  it("merges known aliases and keeps custom names as sent (trimmed, bounded)", () => {
    expect(normalizeAppName("Claude Code")).toBe("claude-code");
    expect(normalizeAppName(" roo-cline ")).toBe("roo-code");
    expect(normalizeAppName("codex")).toBe("codex-cli");
    expect(normalizeAppName("My-App")).toBe("My-App");
    expect(normalizeAppName("CURSOR")).toBe("cursor");
    // Custom names differing only in case are different apps.
    expect(new Set(["MyApp", "myapp", "MYAPP", " MyApp "].map(normalizeAppName))).toEqual(new Set(["MyApp", "myapp", "MYAPP"]));
    expect(normalizeAppName(`  ${"x".repeat(150)}  `)).toBe("x".repeat(100));
    expect(normalizeAppName("")).toBe("unknown");
  });

  it("names of Object.prototype members are custom app names, not inherited values", () => {
    for (const name of Object.getOwnPropertyNames(Object.prototype)) {
      expect(normalizeAppName(name)).toBe(name);
      expect(detectSourceApp(new Headers({ "x-source": name }))).toBe(name);
      expect(appDisplayName(name)).toBe(name);
    }
  });

  it("the same User-Agent gives the same app every time (remembered per isolate)", () => {
    for (let i = 0; i < 3; i++) {
      expect(detectSourceApp(new Headers({ "user-agent": "claude-cli/2.0.14 (external, cli)" }))).toBe("claude-code");
      expect(detectSourceApp(new Headers({ "user-agent": "curl/8" }))).toBe("unknown");
      expect(detectSourceApp(new Headers())).toBe("unknown");
    }
    // More distinct agents than are remembered: still right after the memory is cleared.
    for (let i = 0; i < 1500; i++) expect(detectSourceApp(new Headers({ "user-agent": `bot-${i}` }))).toBe("unknown");
    expect(detectSourceApp(new Headers({ "user-agent": "Cursor/1.2" }))).toBe("cursor");
  });

  it("x-source wins over the User-Agent; unknown when neither identifies the app", () => {
    expect(detectSourceApp(new Headers({ "x-source": "Cursor-IDE", "user-agent": "claude-cli/1.0" }))).toBe("cursor");
    expect(detectSourceApp(new Headers({ "user-agent": "claude-cli/1.0.3 (external, cli)" }))).toBe("claude-code");
    expect(detectSourceApp(new Headers({ "user-agent": "curl/8" }))).toBe("unknown");
    expect(detectSourceApp(new Headers({ "x-source": "  Acme Bot  " }))).toBe("Acme Bot");
  });

  it("recognises the coding clients by their real user agents", () => {
    const cases: Array<[string, string]> = [
      ["claude-cli/2.0.14 (external, cli)", "claude-code"],
      ["codex_cli_rs/0.46.0 (Ubuntu 22.4.0; x86_64) xterm-256color", "codex-cli"],
      ["codex_exec/0.46.0 (Debian 12; x86_64) dumb", "codex-cli"],
      ["GeminiCLI/0.9.0 (linux; x64)", "gemini-cli"],
      ["GitHubCopilotChat/0.31.0", "github-copilot"],
      ["Cline/3.30.1", "cline"],
      ["RooCode/3.28.0", "roo-code"],
      ["Kilo-Code/4.97.0", "kilo-code"],
      ["opencode/0.15.0 ai-sdk/provider-utils/3.0.9", "opencode"],
      // The SDKs themselves are not apps.
      ["Anthropic/JS 0.65.0", "unknown"],
      ["OpenAI/JS 6.3.0", "unknown"],
    ];
    for (const [ua, app] of cases) expect(detectSourceApp(new Headers({ "user-agent": ua })), ua).toBe(app);
  });

  it("display names for known apps, ids for custom ones", () => {
    expect(appDisplayName("claude-code")).toBe("Claude Code");
    expect(appDisplayName("unknown")).toBe("Unknown");
    expect(appDisplayName("my-app")).toBe("my-app");
  });
});

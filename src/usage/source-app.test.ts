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

  it("x-source wins over the User-Agent; unknown when neither identifies the app", () => {
    expect(detectSourceApp(new Headers({ "x-source": "Cursor-IDE", "user-agent": "claude-cli/1.0" }))).toBe("cursor");
    expect(detectSourceApp(new Headers({ "user-agent": "claude-cli/1.0.3 (external, cli)" }))).toBe("claude-code");
    expect(detectSourceApp(new Headers({ "user-agent": "curl/8" }))).toBe("unknown");
    expect(detectSourceApp(new Headers({ "x-source": "  Acme Bot  " }))).toBe("Acme Bot");
  });

  it("display names for known apps, ids for custom ones", () => {
    expect(appDisplayName("claude-code")).toBe("Claude Code");
    expect(appDisplayName("unknown")).toBe("Unknown");
    expect(appDisplayName("my-app")).toBe("my-app");
  });
});

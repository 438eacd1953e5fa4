import { describe, expect, it } from "vitest";
import { appDisplayName, detectSourceApp, normalizeAppName } from "./source-app";

describe("source app attribution", () => {
  it("merges known aliases and keeps custom names as recorded (lower-cased)", () => {
    expect(normalizeAppName("Claude Code")).toBe("claude-code");
    expect(normalizeAppName(" roo-cline ")).toBe("roo-code");
    expect(normalizeAppName("codex")).toBe("codex-cli");
    expect(normalizeAppName("My-App")).toBe("my-app");
    expect(normalizeAppName("")).toBe("unknown");
  });

  it("x-source wins over the User-Agent; unknown when neither identifies the app", () => {
    expect(detectSourceApp(new Headers({ "x-source": "Cursor-IDE", "user-agent": "claude-cli/1.0" }))).toBe("cursor");
    expect(detectSourceApp(new Headers({ "user-agent": "claude-cli/1.0.3 (external, cli)" }))).toBe("claude-code");
    expect(detectSourceApp(new Headers({ "user-agent": "curl/8" }))).toBe("unknown");
  });

  it("display names for known apps, ids for custom ones", () => {
    expect(appDisplayName("claude-code")).toBe("Claude Code");
    expect(appDisplayName("unknown")).toBe("Unknown");
    expect(appDisplayName("my-app")).toBe("my-app");
  });
});

import { describe, expect, it } from "vitest";
import { buildMime, crossingsOf, thresholdOf } from "./budget-alerts";

describe("budget alert helpers", () => {
  it("threshold defaults to 80 and is clamped to 50..100", () => {
    expect(thresholdOf(undefined)).toBe(80);
    expect(thresholdOf(30)).toBe(50);
    expect(thresholdOf(120)).toBe(100);
    expect(thresholdOf(65)).toBe(65);
  });

  it("a crossing goes from below the threshold to at or above it", () => {
    const c = (percentBefore: number, percent: number) => ({ limit: "all_time" as const, windowStart: 0, percentBefore, percent });
    expect(crossingsOf([c(70, 79.99)], 80)).toHaveLength(0);
    expect(crossingsOf([c(70, 80)], 80)).toHaveLength(1);
    expect(crossingsOf([c(80, 95)], 80)).toHaveLength(0);
    expect(crossingsOf([c(10, 150)], 100)).toHaveLength(1);
  });

  it("builds a MIME message with the headers the send_email binding requires, safe against header injection", () => {
    const raw = buildMime({ from: "alerts@switchboard.local", to: "a@example.test", subject: "Hi\r\nBcc: evil@example.test", text: "Grüße 80%" });
    const [head, body] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^From: Switchboard <alerts@switchboard.local>\r\n/);
    expect(head).toMatch(/\r\nMessage-ID: <[^>]+@switchboard\.local>/);
    expect(head).toContain("Subject: Hi Bcc: evil@example.test");
    expect(head).not.toMatch(/\r\nBcc:/);
    expect(new TextDecoder().decode(Uint8Array.from(atob(body!.replace(/\s+/g, "")), (ch) => ch.charCodeAt(0)))).toBe("Grüße 80%");
  });
});

/** E-mail capture for tests: every message the Worker sends through `EMAIL`. */
import { afterEach, beforeEach, expect, vi } from "vitest";
import { env } from "cloudflare:workers";
import { call, json } from "./fixtures";

export const sent: Array<{ to: string; raw: string }> = [];

/** Call at the top of a test file: captures mail before each test, restores after. */
export function captureMail(): void {
  beforeEach(() => {
    sent.length = 0;
    const capture = async (m: EmailMessage): Promise<void> => {
      // workerd keeps the raw message under this own property of EmailMessage.
      const raw = (m as unknown as Record<string, unknown>)["EmailMessage::raw"];
      sent.push({ to: m.to, raw: typeof raw === "string" ? raw : await new Response(raw as ReadableStream).text() });
    };
    vi.spyOn(env.EMAIL, "send").mockImplementation(capture as unknown as typeof env.EMAIL.send);
  });
  afterEach(() => vi.restoreAllMocks());
}

export const email = (tag: string): string => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.test`;

/** The acceptance token of the last invitation e-mailed to `to`. */
export function tokenFor(to: string): string {
  const mail = sent.filter((m) => m.to === to).at(-1);
  expect(mail, `an invitation e-mail to ${to}`).toBeDefined();
  const [head, body] = mail!.raw.split("\r\n\r\n");
  expect(head).toMatch(/^Subject: Invitation to join /m);
  const text = atob(body!.replace(/\s+/g, ""));
  const token = /token[=:] ?([A-Za-z0-9]{20,})/.exec(text)?.[1];
  expect(token).toBeDefined();
  return token!;
}

export const accept = (token: string, password?: string): Promise<Response> =>
  call("/api/memberships/accept", { method: "POST", ...json({ token, ...(password ? { password } : {}) }) });

/**
 * Outgoing e-mail through the `EMAIL` send_email binding (budget alerts, membership invitations).
 * Without `EMAIL_FROM` or the binding nothing is sent. Never throws: a failed send is logged
 * (without the message body, which may hold a one-time token) and reported as false.
 */
import { EmailMessage } from "cloudflare:email";
import type { Env } from "../env";

const headerSafe = (s: string): string => s.replace(/[\r\n]+/g, " ");

/** A minimal RFC 5322 text/plain message (UTF-8, base64 body so any text is safe). */
export function buildMime(m: { from: string; to: string; subject: string; text: string; date?: Date }): string {
  const domain = m.from.split("@")[1] ?? "switchboard.local";
  const bytes = new TextEncoder().encode(m.text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  const body = (btoa(bin).match(/.{1,76}/g) ?? []).join("\r\n");
  return [
    `From: Switchboard <${headerSafe(m.from)}>`,
    `To: <${headerSafe(m.to)}>`,
    `Subject: ${headerSafe(m.subject)}`,
    `Message-ID: <${crypto.randomUUID()}@${headerSafe(domain)}>`,
    `Date: ${(m.date ?? new Date()).toUTCString()}`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    body,
    "",
  ].join("\r\n");
}

/** Sends one text e-mail; true when the binding accepted it. */
export async function sendMail(env: Env, m: { to: string; subject: string; text: string }): Promise<boolean> {
  const from = env.EMAIL_FROM;
  if (!from || !env.EMAIL) return false;
  try {
    await env.EMAIL.send(new EmailMessage(from, m.to, buildMime({ from, ...m })));
    return true;
  } catch (err) {
    console.error(`e-mail "${m.subject}" failed`, err instanceof Error ? err.message : String(err));
    return false;
  }
}

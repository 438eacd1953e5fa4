/**
 * What the bad-input suites share (bad-input-*.test.ts): the hostile strings and nestings they
 * send, and the answers they accept.
 */
import { expectEnvelope, expectNoStack, type Json } from "./helpers";

export const RUNS = { numRuns: 80 };
export const MODEL = "llama-3.3-70b-instruct";
export const valid = (): Json => ({ model: MODEL, messages: [{ role: "user", content: "hi" }] });

/** 2xx is acceptable only where the generated body happened to be valid; otherwise a 4xx envelope. */
export async function expectOkOrEnvelope(res: Response): Promise<void> {
  if (res.status < 300) {
    expectNoStack(await res.text());
    return;
  }
  await expectEnvelope(res);
}

export const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
export const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Strings that have hurt parsers, routers and SQL layers before. */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "../../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f",
  "openai/../anthropic/claude",
  "openai%2Fgpt-4o-mini",
  "'; DROP TABLE api_keys; --",
  '" OR 1=1 --',
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "__proto__",
  "constructor",
  "\ud800",
  "😀".repeat(50),
  "x".repeat(5000),
  "\r\nX-Injected: 1",
];

export const isJson = (s: string): boolean => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

/**
 * `GET /dashboard/sso/start` is public and may run discovery against an identity provider, so it
 * is limited per client IP like password sign-in: the attempt after the window's allowance is
 * `429` with `retry-after`, before any lookup; another address is not affected.
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { ATTEMPTS_PER_IP, IP_WINDOW_MS } from "../../src/auth/sign-in";

/** A documentation address of its own per run, so no other test shares its counter. */
const freshIp = (): string => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

const startFrom = (ip: string, email: string): Promise<Response> =>
  call(`/dashboard/sso/start?email=${encodeURIComponent(email)}`, { redirect: "manual", headers: { "cf-connecting-ip": ip } });

/** The window's allowance from one address, then one more: the last answer. */
async function spendAllowance(ip: string): Promise<Response> {
  for (let i = 0; i < ATTEMPTS_PER_IP; i++) {
    const res = await startFrom(ip, `person${i}@nobody-has-this-domain.test`);
    await res.text();
    expect(res.status).toBe(404);
  }
  return startFrom(ip, "one-more@nobody-has-this-domain.test");
}

describe("SSO start rate limit", () => {
  it("answers 429 with retry-after past the per-IP allowance, and counts each address apart", async () => {
    // The windows are fixed (aligned to IP_WINDOW_MS): a run that crosses a window's end starts
    // counting again, so it is run once more (the next end is 15 minutes away).
    let limited: Response | null = null;
    for (let attempt = 0; attempt < 2 && !limited; attempt++) {
      const window = Math.floor(Date.now() / IP_WINDOW_MS);
      const last = await spendAllowance(freshIp());
      if (last.status === 429 || Math.floor(Date.now() / IP_WINDOW_MS) === window) limited = last;
      else await last.text();
    }
    expect(limited).not.toBeNull();
    expect(limited!.status).toBe(429);
    const body = (await limited!.json()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);

    const other = await startFrom(freshIp(), "someone@nobody-has-this-domain.test");
    await other.text();
    expect(other.status).toBe(404);
  });
});

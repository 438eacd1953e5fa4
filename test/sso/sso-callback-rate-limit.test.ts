/**
 * `GET /dashboard/sso/callback` is public and opens the attempt cookie (and may call the identity
 * provider), so it is limited per client IP like `/dashboard/sso/start`: the call after the
 * window's allowance is `429` with `retry-after` and the error envelope, before the cookie is read;
 * another address is not affected, and start keeps a counter of its own.
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { ATTEMPTS_PER_IP, IP_WINDOW_MS } from "../../src/auth/sign-in";

/** A documentation address of its own per run, so no other test shares its counter. */
const freshIp = (): string => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

/** A callback without the attempt cookie: the page that asks to start again (400) while allowed. */
const callbackFrom = (ip: string): Promise<Response> =>
  call("/dashboard/sso/callback?code=x&state=y", { redirect: "manual", headers: { "cf-connecting-ip": ip } });

const startFrom = (ip: string): Promise<Response> =>
  call("/dashboard/sso/start?email=someone%40nobody-has-this-domain.test", { redirect: "manual", headers: { "cf-connecting-ip": ip } });

/** The window's allowance from one address, then one more: the last answer. */
async function spendAllowance(ip: string): Promise<Response> {
  for (let i = 0; i < ATTEMPTS_PER_IP; i++) {
    const res = await callbackFrom(ip);
    await res.text();
    expect(res.status).toBe(400);
  }
  return callbackFrom(ip);
}

describe("SSO callback rate limit", () => {
  it("answers 429 with retry-after past the per-IP allowance, apart from start's counter and other addresses", async () => {
    // The windows are fixed (aligned to IP_WINDOW_MS): a run that crosses a window's end starts
    // counting again, so it is run once more (the next end is 15 minutes away).
    let limited: Response | null = null;
    let ip = "";
    for (let attempt = 0; attempt < 2 && !limited; attempt++) {
      const window = Math.floor(Date.now() / IP_WINDOW_MS);
      ip = freshIp();
      const last = await spendAllowance(ip);
      if (last.status === 429 || Math.floor(Date.now() / IP_WINDOW_MS) === window) limited = last;
      else await last.text();
    }
    expect(limited).not.toBeNull();
    expect(limited!.status).toBe(429);
    const body = (await limited!.json()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);

    const start = await startFrom(ip);
    await start.text();
    expect(start.status).toBe(404);
    const other = await callbackFrom(freshIp());
    await other.text();
    expect(other.status).toBe(400);
  });
});

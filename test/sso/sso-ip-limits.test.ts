/**
 * The public SSO pages are limited per client IP like password sign-in: `/dashboard/sso/start` may
 * run discovery against an identity provider, `/dashboard/sso/callback` opens the attempt cookie
 * (and may call the identity provider). The call after the window's allowance is `429` with
 * `retry-after` and the error envelope, before any lookup or cookie; another address is not
 * affected, and each page keeps a counter of its own.
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { ATTEMPTS_PER_IP } from "../../src/auth/sign-in";

/** A documentation address of its own per run, so no other test shares its counter. */
const freshIp = (): string => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

const startFrom = (ip: string, email = "someone@nobody-has-this-domain.test"): Promise<Response> =>
  call(`/dashboard/sso/start?email=${encodeURIComponent(email)}`, { redirect: "manual", headers: { "cf-connecting-ip": ip } });

/** A callback without the attempt cookie: the page that asks to start again (400) while allowed. */
const callbackFrom = (ip: string): Promise<Response> =>
  call("/dashboard/sso/callback?code=x&state=y", { redirect: "manual", headers: { "cf-connecting-ip": ip } });

/**
 * Spends one address's allowance on `page` (each answered `allowed`), then calls once more and
 * checks that answer is the limit's 429 (the window slides, so no window's end lets it through).
 * Returns the limited address.
 */
async function limitedAddress(page: (ip: string, i: number) => Promise<Response>, allowed: number): Promise<string> {
  const ip = freshIp();
  for (let i = 0; i < ATTEMPTS_PER_IP; i++) {
    const res = await page(ip, i);
    await res.text();
    expect(res.status).toBe(allowed);
  }
  const limited = await page(ip, ATTEMPTS_PER_IP);
  expect(limited.status).toBe(429);
  const body = (await limited.json()) as { error: { type: string; code: string } };
  expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  return ip;
}

describe("SSO pages' per-IP limits", () => {
  it("start: 429 with retry-after past the allowance, and each address counted apart", async () => {
    await limitedAddress((ip, i) => startFrom(ip, `person${i}@nobody-has-this-domain.test`), 404);
    const other = await startFrom(freshIp());
    await other.text();
    expect(other.status).toBe(404);
  });

  it("callback: 429 with retry-after past the allowance, apart from start's counter and other addresses", async () => {
    const ip = await limitedAddress((ip) => callbackFrom(ip), 400);
    const start = await startFrom(ip);
    await start.text();
    expect(start.status).toBe(404);
    const other = await callbackFrom(freshIp());
    await other.text();
    expect(other.status).toBe(400);
  });
});

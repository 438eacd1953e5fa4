/**
 * `GET /dashboard/sso/start` is public and may run discovery against an identity provider, so it
 * is limited per client IP like password sign-in: the attempt after the window's allowance is
 * `429` with `retry-after`, before any lookup; another address is not affected.
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { ATTEMPTS_PER_IP } from "../../src/auth/sign-in";

/** A documentation address of its own per run, so no other test shares its counter. */
const freshIp = (): string => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;

const startFrom = (ip: string, email: string): Promise<Response> =>
  call(`/dashboard/sso/start?email=${encodeURIComponent(email)}`, { redirect: "manual", headers: { "cf-connecting-ip": ip } });

describe("SSO start rate limit", () => {
  it("answers 429 with retry-after past the per-IP allowance, and counts each address apart", async () => {
    const ip = freshIp();
    for (let i = 0; i < ATTEMPTS_PER_IP; i++) {
      const res = await startFrom(ip, `person${i}@nobody-has-this-domain.test`);
      await res.text();
      expect(res.status).toBe(404);
    }
    const limited = await startFrom(ip, "one-more@nobody-has-this-domain.test");
    const body = (await limited.json()) as { error: { type: string; code: string } };
    expect(limited.status).toBe(429);
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);

    const other = await startFrom(freshIp(), "someone@nobody-has-this-domain.test");
    await other.text();
    expect(other.status).toBe(404);
  });
});

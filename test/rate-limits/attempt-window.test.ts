/**
 * The attempt counters (`RateLimiter.hit`: sign-in and SSO pages per client IP, invitation
 * e-mails) slide like the per-key rate window: a call is decided on the last window (counted per
 * thirtieth of it), so no interval of a window's length admits more than the limit. Fixed windows
 * let a caller spend one window's limit at its end and the next window's right after it: twice
 * the limit within seconds. Driven through the real object with the clock `hit` takes: no waiting.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { fromFixedWindow, hitWindow, SUB_WINDOWS, type AttemptWindow } from "../../src/durable-objects/attempt-window";

const WINDOW = 15 * 60_000;
/** A time far from zero, aligned to the window (where a fixed window would start again). */
const T0 = 2_000 * WINDOW;

const counter = () => {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`attempt-window-test:${crypto.randomUUID()}`));
  return (limit: number, at: number, cost = 1) => stub.hit(limit, WINDOW, at, cost);
};

/** Calls `n` times from `from`, `stepMs` apart; how many were allowed. */
async function burst(hit: ReturnType<typeof counter>, limit: number, n: number, from: number, stepMs: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < n; i++) if ((await hit(limit, from + i * stepMs)).allowed) allowed++;
  return allowed;
}

describe("RateLimiter.hit slides", () => {
  it("a burst just before a window boundary leaves no room for a burst just after it", async () => {
    const hit = counter();
    expect(await burst(hit, 10, 10, T0 - 2_000, 100)).toBe(10);
    // Fixed windows allowed 10 more here: 20 within three seconds.
    expect(await burst(hit, 10, 10, T0 + 1_000, 100)).toBe(0);
  });

  it("Retry-After is honest: refused a moment before the named time, allowed at it", async () => {
    const hit = counter();
    expect(await burst(hit, 5, 5, T0 - 2_000, 100)).toBe(5);
    const refused = await hit(5, T0 + 1_000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // The five leave once a window has passed since the end of the sub-window (30 s) they fell in.
    expect(refused.resetAt).toBe(T0 + WINDOW);
    expect((await hit(5, refused.resetAt - 1)).allowed).toBe(false);
    expect(await hit(5, refused.resetAt)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it("refused calls do not count: a caller that keeps trying is still let in once the window has room", async () => {
    const hit = counter();
    expect(await burst(hit, 3, 3, T0, 1_000)).toBe(3);
    // Hammering for the rest of the window.
    expect(await burst(hit, 3, 30, T0 + 10_000, 25_000)).toBe(0);
    expect((await hit(3, T0 + WINDOW + 30_000)).allowed).toBe(true);
  });

  it("a steady caller below the limit is never refused, and a batch counts each of its calls", async () => {
    const hit = counter();
    // 45 per window, evenly, for three windows, against a limit of 50.
    const step = WINDOW / 45;
    for (let t = T0; t < T0 + 3 * WINDOW; t += step) expect((await hit(50, Math.floor(t))).allowed).toBe(true);
    const batch = counter();
    expect((await batch(10, T0, 8)).remaining).toBe(2);
    expect((await batch(10, T0 + 1, 3)).allowed).toBe(false);
    expect((await batch(10, T0 + 2, 2)).allowed).toBe(true);
  });

  it("keeps at most SUB_WINDOWS + 1 counts whatever the limit and traffic", () => {
    let w: AttemptWindow | undefined;
    let most = 0;
    for (let t = T0; t < T0 + 4 * WINDOW; t += 7_000) {
      w = hitWindow(w, 1_000_000, WINDOW, t, 3).window;
      most = Math.max(most, w.counts.length);
    }
    expect(most).toBe(SUB_WINDOWS + 1);
  });

  it("a fixed window stored before the slide keeps its calls counted until it would have ended", () => {
    const fixed = fromFixedWindow({ windowStart: T0, count: 5 }, WINDOW);
    const during = hitWindow(fixed, 5, WINDOW, T0 + WINDOW - 1, 1).result;
    expect(during).toMatchObject({ allowed: false, resetAt: T0 + WINDOW });
    expect(hitWindow(fixed, 5, WINDOW, T0 + WINDOW, 1).result.allowed).toBe(true);
  });
});

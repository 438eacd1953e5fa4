/**
 * The rate window slides (src/durable-objects/rate-window.ts): a call is decided on the last
 * minute, counted per second, so no interval of a minute holds more than the limit; a client
 * cannot spend one minute's limit in its last second and the next minute's in the following one.
 * Driven on the window's own arithmetic (`applyRate`) with a clock of the test's choosing: no
 * waiting for a minute to end.
 */
import { describe, expect, it } from "vitest";
import { applyRate, emptyWindow, type RateAnswer, type WindowLimits, type WindowState } from "../../src/durable-objects/rate-window";

const MINUTE = 60_000;
/** A window start far from zero, aligned to the minute. */
const T0 = 1_000 * MINUTE;

function limiter(limits: WindowLimits) {
  let w: WindowState = emptyWindow(0);
  return {
    ask(at: number, extra: { lease?: boolean; close?: { leaseId: string; admittedTotal: string }[] } = {}): RateAnswer {
      const r = applyRate(w, { limits, cost: 1, ...extra }, at);
      w = r.window;
      return r.answer;
    },
    close(at: number, leaseId: string, admitted: number): void {
      w = applyRate(w, { limits, cost: 0, close: [{ leaseId, admittedTotal: String(admitted) }] }, at).window;
    },
    view(at: number): RateAnswer {
      const r = applyRate(w, { limits, cost: 0 }, at);
      w = r.window;
      return r.answer;
    },
  };
}

/** Tries a request every `stepMs` from `from` to `to`; the times of those admitted. */
function greedy(l: ReturnType<typeof limiter>, from: number, to: number, stepMs: number): number[] {
  const admitted: number[] = [];
  for (let t = from; t < to; t += stepMs) if (l.ask(t).ok) admitted.push(t);
  return admitted;
}

/** The most admissions within any interval of `spanMs`. */
function busiest(times: number[], spanMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= spanMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe("sliding rate window", () => {
  it("a burst at a minute's end leaves no room for a second burst at the next minute's start", () => {
    const l = limiter({ requests: 10, tokens: null });
    const first = greedy(l, T0 + 59_000, T0 + 60_000, 50);
    const second = greedy(l, T0 + 60_000, T0 + 61_000, 50);
    expect(first.length).toBe(10);
    // Fixed windows admitted 10 more here: 20 within two seconds.
    expect(second.length).toBe(0);
  });

  it("a client trying every 250 ms, starting in a minute's last seconds, never gets more than the limit within any minute", () => {
    const l = limiter({ requests: 10, tokens: null });
    const times = greedy(l, T0 + 57_500, T0 + 5 * MINUTE, 250);
    // Fixed windows admitted 10 before the minute's end and 10 right after: 20 within 5 s.
    expect(busiest(times, MINUTE)).toBeLessThanOrEqual(10);
    // Not starved either: the limit about every minute.
    expect(times.length).toBeGreaterThanOrEqual(40);
  });

  it("isolates admitting under leases never put more than the limit into any minute", () => {
    const limit = 400;
    const l = limiter({ requests: limit, tokens: null });
    const admitted: number[] = [];
    let seed = 7;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    // Three isolates; each asks for a lease, admits a burst under it within its life, and closes it when it ends.
    const open: Array<{ leaseId: string; left: number; ends: number; used: number }> = [];
    for (let t = T0 + 50_000; t < T0 + 4 * MINUTE; t += 20) {
      for (let i = open.length - 1; i >= 0; i--) {
        const lease = open[i]!;
        if (t >= lease.ends) {
          l.close(t, lease.leaseId, lease.used);
          open.splice(i, 1);
        } else if (lease.left > 0 && random() < 0.6) {
          lease.left--;
          lease.used++;
          admitted.push(t);
        }
      }
      if (open.length < 3 && random() < 0.3) {
        const a = l.ask(t, { lease: true });
        if (a.ok) admitted.push(t);
        if (a.ok && a.lease) open.push({ leaseId: a.lease.leaseId, left: Number(a.lease.slice) - 1, ends: t + a.lease.ttlMs, used: 1 });
      }
    }
    expect(admitted.length).toBeGreaterThan(limit);
    expect(busiest(admitted.sort((a, b) => a - b), MINUTE)).toBeLessThanOrEqual(limit);
  });

  it("traffic spread evenly below the limit is never refused", () => {
    const l = limiter({ requests: 60, tokens: null });
    // 55 a minute, evenly, for five minutes.
    for (let t = T0; t < T0 + 5 * MINUTE; t += MINUTE / 55) expect(l.ask(Math.floor(t)).ok).toBe(true);
  });

  it("Retry-After names when the oldest requests leave the window", () => {
    const l = limiter({ requests: 10, tokens: null });
    expect(greedy(l, T0 + 59_000, T0 + 60_000, 50).length).toBe(10);
    const refused = l.ask(T0 + 60_500);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.view.requestsRemaining).toBe(0);
    const wait = refused.retryAfterSeconds * 1_000;
    // The ten were admitted in second 59: they leave a minute after its end.
    expect(wait).toBe(60_000);
    expect(l.ask(T0 + 60_500 + wait - 1_000).ok).toBe(false);
    expect(l.ask(T0 + 60_500 + wait).ok).toBe(true);
  });

  it("a lease granted in the minute before closes into the window: its unused slice stops counting", () => {
    const l = limiter({ requests: 1_000, tokens: null });
    const leased = l.ask(T0 + 59_500, { lease: true });
    expect(leased.ok && leased.lease).toBeTruthy();
    if (!leased.ok || !leased.lease) return;
    const slice = Number(leased.lease.slice);
    expect(slice).toBeGreaterThan(100);
    // Just after the minute's end, the open slice still counts as used.
    const before = l.view(T0 + 60_000);
    expect(before.view.requestsRemaining).toBe(1_000 - slice);
    // The isolate reports 5 admitted under it: only those count (and this call's own request).
    l.ask(T0 + 60_000, { close: [{ leaseId: leased.lease.leaseId, admittedTotal: "5" }] });
    const after = l.view(T0 + 60_000);
    expect(after.view.requestsRemaining).toBe(1_000 - 5 - 1);
  });

  it("tokens slide too: tokens that went over the limit at a minute's end keep refusing early in the next", () => {
    const limits = { requests: null, tokens: 1_000 };
    let w: WindowState = emptyWindow(0);
    // Tokens count as requests settle, so a minute can end above its limit.
    w = applyRate(w, { limits, cost: 0, tokens: 1_200 }, T0 + 59_000).window;
    const next = applyRate(w, { limits, cost: 1 }, T0 + 61_000);
    expect(next.answer.ok).toBe(false);
    if (!next.answer.ok) expect(next.answer.reason).toBe("tokens");
  });
});

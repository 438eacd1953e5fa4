/**
 * The sliding window of `RateLimiter.hit` (sign-in and SSO pages per client IP, invitation
 * e-mails): calls are counted per sub-window (a thirtieth of the window) and a call is decided on
 * the sub-windows of the last window, so no interval of a window's length admits more than the
 * limit. (Fixed windows let a caller spend one window's limit at its end and the next one's right
 * after: twice the limit within seconds.) The cost: a call counts for up to one sub-window longer
 * than the window (15-minute windows: 30 s), and the object keeps at most SUB_WINDOWS + 1 counts,
 * whatever the limit. A refused call is not counted, so the time a refusal names is when the call
 * fits, however often the caller tried meanwhile. Pure: the object stores what this returns.
 */

/** Sub-windows per window: the resolution of the slide. */
export const SUB_WINDOWS = 30;

export interface AttemptWindow {
  /** The sub-window's length the counts were kept in. */
  slotMs: number;
  /** [sub-window index (time / slotMs), calls allowed in it], oldest first; only those still counted. */
  counts: Array<[number, number]>;
}

export interface AttemptResult {
  allowed: boolean;
  /** Calls the window still allows now. */
  remaining: number;
  /** Epoch ms when the window has room again: for a refused call, when it fits; else when the oldest counted call leaves. */
  resetAt: number;
}

const slotMsOf = (windowMs: number): number => Math.max(1, Math.ceil(windowMs / SUB_WINDOWS));

/** Counts kept under another sub-window length (the window changed) moved to this one's sub-windows, never earlier. */
function rescale(w: AttemptWindow, slotMs: number): Array<[number, number]> {
  if (w.slotMs === slotMs) return w.counts;
  const out = new Map<number, number>();
  for (const [j, n] of w.counts) {
    const k = Math.floor(((j + 1) * w.slotMs - 1) / slotMs);
    out.set(k, (out.get(k) ?? 0) + n);
  }
  return [...out].sort((a, b) => a[0] - b[0]);
}

/** A fixed window stored before the window slid: its calls stop counting when it would have ended. */
export function fromFixedWindow(fixed: { windowStart: number; count: number }, windowMs: number): AttemptWindow {
  const slotMs = slotMsOf(windowMs);
  return { slotMs, counts: [[Math.floor(fixed.windowStart / slotMs) - 1, fixed.count]] };
}

/** Decides one call of `cost` units at `now` (limit per `windowMs`); the window to store, and the answer. */
export function hitWindow(stored: AttemptWindow | undefined, limit: number, windowMs: number, now: number, cost: number): { window: AttemptWindow; result: AttemptResult } {
  const slotMs = slotMsOf(windowMs);
  // Sub-window j leaves the window once a window has passed since its end.
  const leavesAt = (j: number): number => (j + 1) * slotMs + windowMs;
  const counts = (stored ? rescale(stored, slotMs) : []).filter(([j]) => leavesAt(j) > now);
  const used = counts.reduce((a, [, n]) => a + n, 0);
  const units = Math.max(1, Math.floor(cost));
  /** When what is counted has fallen so that `extra` more fit under the limit (oldest sub-windows leave first). */
  const roomAt = (extra: number): number => {
    let left = used;
    for (const [j, n] of counts) {
      left -= n;
      if (left + extra <= limit) return leavesAt(j);
    }
    return now + windowMs;
  };
  if (used + units > limit) {
    return { window: { slotMs, counts }, result: { allowed: false, remaining: Math.max(0, limit - used), resetAt: roomAt(units) } };
  }
  const slot = Math.floor(now / slotMs);
  const last = counts[counts.length - 1];
  // A clock behind the newest sub-window counts the call there (a little longer, never shorter).
  if (last && last[0] >= slot) last[1] += units;
  else counts.push([slot, units]);
  const window = { slotMs, counts };
  const first = counts[0]!;
  return { window, result: { allowed: true, remaining: limit - used - units, resetAt: leavesAt(first[0]) } };
}

/**
 * Budget leases, isolate side (docs/admission.md). A budget object (a key's KeyState, an
 * organization's OrgCredits) may answer an admission with a lease: a slice of its remaining
 * budget (or none needed: no limit), the key's version, and a time to live of at most ~1 s. Until
 * it expires, this isolate admits requests of that key/organization against the slice without
 * asking the object; each such request settles against the lease (`lease:<id>:<estimate>`
 * reservation ids), and the lease's admitted total is reported when the isolate asks for the next
 * one. The lease is the unit of trust: nothing here is shared between isolates or machines.
 *
 * Local expiry is counted from when the request for the lease was SENT, so it always ends before
 * the object's own expiry; admin changes wait for the object's expiry, so no isolate admits on a
 * lease from before a change once the change has returned.
 */
import type { LeaseClose, LeaseGrant } from "../durable-objects/lease-book";
import { leaseReservationId } from "../durable-objects/lease-book";
import type { Pico } from "../billing/money";
import { ApiError } from "../errors/api-error";

/** Margin taken off the lease's life on this side (clock granularity, scheduling). */
const SAFETY_MS = 50;
/**
 * Share of a lease's life after which the next one is asked for in the background (with the
 * queued settlements; src/billing/settle.ts), so a busy isolate never waits for a renewal.
 */
const RENEW_AT = 0.7;
/** Past this share of its life, a lease is renewed along with another one that is due. */
const JOIN_AT = 0.4;
const MAX_ENTRIES = 10_000;
/**
 * How long a request waits for another request's renewal of the same lease before it asks the
 * object itself. The wait is on this request's own timer: the other request may have been
 * cancelled (its client went away) with the renewal unsettled, and workerd cancels a request
 * whose only wait is a promise nothing in its own context can settle ("code had hung").
 */
const JOIN_WAIT_MS = 500;
/**
 * A renewal entry older than this is abandoned (its request was cancelled before it could clear
 * it): it no longer blocks renewals. Well past the longest admission call (its bound below).
 */
const ABANDONED_MS = 15_000;
/** The longest an admission call to a budget object may take (its wait bound plus this margin). */
const CALL_MARGIN_MS = 5_000;

interface LocalLease {
  leaseId: string;
  /** null: no limit, only liveness. */
  slice: Pico | null;
  used: Pico;
  expiresAt: number;
  /** From then on, a request that admits under it triggers a background renewal. */
  renewAt: number;
  /** From then on, it is renewed with another budget's renewal (key and credits leases in step). */
  joinAt: number;
  /** Largest estimate admitted under it: sizes the next lease (the object's "worth 32 requests" rule). */
  unit: Pico;
  /** Key leases: the key's version and secret fingerprint the lease was granted for. */
  version: number;
  fingerprint: string;
}

const current = new Map<string, LocalLease>();
/** Leases replaced before they were reported (concurrent renewals): sent with the next request. */
const unreported = new Map<string, LeaseClose[]>();
/** One renewal at a time per budget: the others wait for it (bounded), then try locally again. */
const renewing = new Map<string, { done: Promise<unknown>; since: number }>();

/** The renewal under way for `name`, if any; an abandoned one is forgotten. */
function renewalUnderWay(name: string, now = Date.now()): Promise<unknown> | null {
  const r = renewing.get(name);
  if (!r) return null;
  if (now - r.since <= ABANDONED_MS) return r.done;
  renewing.delete(name);
  return null;
}

/** Resolves when `p` settles or after `ms`, whichever comes first, on this request's own timer. */
async function waitAtMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([p.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `p`, or a 429 `budget_busy` once `ms` passed: an admission never waits without bound for a
 * budget object (one that is stuck or unreachable refuses the request with a retry, never hangs it).
 */
export async function withinBound<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const retryAfter = String(Math.max(1, Math.ceil(ms / 1000)));
      reject(
        new ApiError(429, `The budget of this request did not answer within ${ms} ms; retry in ${retryAfter} s.`, {
          type: "rate_limit_error",
          code: "budget_busy",
          headers: { "retry-after": retryAfter },
        }),
      );
    }, ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The bound of an admission call that may wait `waitMs` inside the object. */
export const admissionCallBoundMs = (waitMs: number): number => waitMs + CALL_MARGIN_MS;

const valid = (l: LocalLease | undefined, version: number, fingerprint: string, now: number): l is LocalLease =>
  l !== undefined && now < l.expiresAt && l.version === version && l.fingerprint === fingerprint;

/** Admits `estimate` under the current lease of `name`; returns the reservation id, or null. */
function admitUnderLease(name: string, estimate: Pico, version = 0, fingerprint = "", now = Date.now()): string | null {
  const l = current.get(name);
  if (!valid(l, version, fingerprint, now)) return null;
  if (l.slice !== null && l.used + estimate > l.slice) return null;
  l.used += estimate;
  if (estimate > l.unit) l.unit = estimate;
  return leaseReservationId(l.leaseId, estimate);
}

/** This isolate's live lease of `name`: its slice (null: unlimited), what it admitted, its end; null: none. */
export function leaseRoom(name: string, now = Date.now()): { slice: Pico | null; used: Pico; expiresAt: number } | null {
  const l = current.get(name);
  return l && now < l.expiresAt ? { slice: l.slice, used: l.used, expiresAt: l.expiresAt } : null;
}

/** Whether a live lease vouches for this key version and secret (liveness without a round trip). */
export const leaseVouches = (name: string, version: number, fingerprint: string, now = Date.now()): boolean =>
  valid(current.get(name), version, fingerprint, now);

/** The leases to report with the next request to the object (the current one is given up). */
function takeCloses(name: string): LeaseClose[] {
  const out = unreported.get(name) ?? [];
  unreported.delete(name);
  const l = current.get(name);
  if (l) {
    current.delete(name);
    out.push({ leaseId: l.leaseId, admittedTotal: l.used.toString() });
  }
  return out;
}

/** Gives closes back when the call carrying them failed: they go with the next one. */
export function keepCloses(name: string, closes: LeaseClose[]): void {
  if (closes.length) unreported.set(name, [...(unreported.get(name) ?? []), ...closes]);
}

/** Stores a lease the object granted, with the first request (`firstEstimate`) already admitted under it. */
function installLease(name: string, grant: LeaseGrant, sentAt: number, firstEstimate: Pico, version = 0, fingerprint = "", unit = firstEstimate): void {
  const previous = current.get(name);
  if (previous) keepCloses(name, [{ leaseId: previous.leaseId, admittedTotal: previous.used.toString() }]);
  if (current.size >= MAX_ENTRIES && !previous) {
    const oldest = current.keys().next().value;
    if (oldest !== undefined) {
      // Its admitted total must still reach the object: it goes with that budget's next request.
      keepCloses(oldest, takeCloses(oldest));
    }
  }
  current.set(name, {
    leaseId: grant.leaseId,
    slice: grant.slice === null ? null : BigInt(grant.slice),
    used: firstEstimate,
    expiresAt: sentAt + grant.ttlMs - SAFETY_MS,
    renewAt: sentAt + Math.floor(grant.ttlMs * RENEW_AT),
    joinAt: sentAt + Math.floor(grant.ttlMs * JOIN_AT),
    unit,
    version,
    fingerprint,
  });
}

/**
 * Runs `ask` (the round trip to the object) unless another request of this isolate is already
 * renewing the same lease: then waits for that one and returns null (the caller tries locally
 * again, and asks itself only if that fails).
 */
async function renewOnce<T>(name: string, ask: () => Promise<T>): Promise<T | null> {
  const running = renewalUnderWay(name);
  if (running) {
    await waitAtMost(running, JOIN_WAIT_MS);
    return null;
  }
  const p = ask();
  const entry = { done: p, since: Date.now() };
  renewing.set(name, entry);
  try {
    return await p;
  } finally {
    if (renewing.get(name) === entry) renewing.delete(name);
  }
}

/**
 * Admission through a lease: `amount` is admitted under this isolate's lease of `name` when it has
 * room (no round trip); otherwise `call` asks the object (reporting the leases given up), and a
 * lease in its answer (`grantOf`) is kept for the next requests. One renewal per budget at a time.
 */
export async function viaLease<G>(
  name: string,
  amount: Pico,
  who: { version?: number; fingerprint?: string; boundMs?: number },
  call: (close: LeaseClose[]) => Promise<G>,
  grantOf: (gate: G) => { lease: LeaseGrant; version?: number } | null,
): Promise<{ reservationId: string } | { gate: G }> {
  const version = who.version ?? 0;
  const fingerprint = who.fingerprint ?? "";
  const local = admitUnderLease(name, amount, version, fingerprint);
  if (local) return { reservationId: local };
  const ask = async (): Promise<G> => {
    const sentAt = Date.now();
    const close = takeCloses(name);
    let gate: G;
    try {
      gate = await withinBound(call(close), who.boundMs ?? admissionCallBoundMs(0));
    } catch (err) {
      keepCloses(name, close);
      throw err;
    }
    const granted = grantOf(gate);
    if (granted) installLease(name, granted.lease, sentAt, amount, granted.version ?? 0, fingerprint);
    return gate;
  };
  const first = await renewOnce(name, ask);
  if (first !== null) return { gate: first };
  // Another request of this isolate just renewed the lease: try it first.
  const again = admitUnderLease(name, amount, version, fingerprint);
  return again ? { reservationId: again } : { gate: await ask() };
}

/**
 * Whether the live lease of `name` is past its renewal point with no renewal under way. `joining`:
 * another lease is being renewed now, and this one goes with it if it is past `JOIN_AT`.
 */
export function renewalDue(name: string, now = Date.now(), joining = false): boolean {
  const l = current.get(name);
  return l !== undefined && now >= (joining ? Math.min(l.joinAt, l.renewAt) : l.renewAt) && now < l.expiresAt && renewalUnderWay(name, now) === null;
}

/** A background renewal under way: what to send with it, and how to end it. */
export interface Renewal {
  /** Sizes the next slice (the largest estimate admitted under the current lease). */
  unit: Pico;
  /** The key secret the current lease was granted for (key leases). */
  fingerprint: string;
  /** Leases given up earlier, reported with this call. The current one stays in use until replaced. */
  close: LeaseClose[];
  /** The object's answer: the next lease (installed; the current one is reported next time), or none. */
  finish(answer: { lease: LeaseGrant; version?: number } | null): void;
  /** The call failed: the closes go with the next call. */
  fail(): void;
}

/**
 * Starts the early renewal of `name`'s lease (null when not due or already under way). Requests
 * keep admitting under the current lease meanwhile; one that finds it expired waits for this
 * renewal instead of asking itself (`renewOnce`).
 */
export function startRenewal(name: string, joining = false, now = Date.now()): Renewal | null {
  if (!renewalDue(name, now, joining)) return null;
  const l = current.get(name)!;
  const close = unreported.get(name) ?? [];
  unreported.delete(name);
  let end!: () => void;
  const pending = new Promise<void>((resolve) => {
    end = () => {
      if (renewing.get(name) === entry) renewing.delete(name);
      resolve();
    };
  });
  // Never settled if the request running it is cancelled first: waiters are bounded, and the
  // entry counts as abandoned after ABANDONED_MS (`renewalUnderWay`).
  const entry = { done: pending, since: now };
  renewing.set(name, entry);
  return {
    unit: l.unit,
    fingerprint: l.fingerprint,
    close,
    finish(answer) {
      if (answer) installLease(name, answer.lease, now, 0n, answer.version ?? l.version, l.fingerprint, l.unit);
      // Refused (near the limit, key changed): no second try under this lease; at its expiry the
      // next request asks the object itself.
      else l.renewAt = Number.POSITIVE_INFINITY;
      end();
    },
    fail() {
      keepCloses(name, close);
      l.renewAt = Number.POSITIVE_INFINITY;
      end();
    },
  };
}

/**
 * The closes to send with a flush that renews nothing: leases replaced earlier, and the current
 * one once it has expired (nothing can be admitted under it any more, so its total is final).
 * This is how an isolate that goes idle hands back its unused slice within a second, instead of
 * the object holding it until its 15-minute expiry. Empty while a renewal is under way (that call
 * carries them). Give them back with `keepCloses` when the call fails.
 */
export function takeEndedCloses(name: string, now = Date.now()): LeaseClose[] {
  if (renewalUnderWay(name, now)) return [];
  const out = unreported.get(name) ?? [];
  unreported.delete(name);
  const l = current.get(name);
  if (l && now >= l.expiresAt) {
    current.delete(name);
    out.push({ leaseId: l.leaseId, admittedTotal: l.used.toString() });
  }
  return out;
}

/**
 * Budget leases, object side (KeyState, OrgCredits; docs/admission.md). A lease gives one isolate
 * a slice of the remaining budget for at most LEASE_TTL_MS; the isolate admits requests against
 * it locally. The object holds, per lease:
 *  - open or expired without a close: slice - estimates of its requests already settled;
 *  - closed (the isolate reported the estimates it admitted in all): that total - settled estimates.
 * So the hold always covers the upper bounds of the lease's requests still in flight. An isolate
 * closes its previous lease when it asks for the next; an expired lease nobody closed (the isolate
 * went idle or died) keeps its hold for UNCLOSED_TTL_MS. A null slice (no limit) holds nothing.
 */
import type { Pico } from "../billing/money";

export const LEASE_TTL_MS = 1_000;
const UNCLOSED_TTL_MS = 15 * 60 * 1000;

/** A lease as the isolate receives it. `slice` is pico-dollars as a decimal string; null = unlimited. */
export interface LeaseGrant {
  leaseId: string;
  slice: string | null;
  ttlMs: number;
}

/** What an isolate reports about a lease it stopped using. */
export interface LeaseClose {
  leaseId: string;
  /** Sum of the estimates it admitted under the lease. */
  admittedTotal: string;
}

interface Lease {
  slice: Pico | null;
  expiresAt: number;
  settled: Pico;
  closedTotal: Pico | null;
}

/** Reservation ids of requests admitted under a lease: `lease:<leaseId>:<estimate>`. */
export const leaseReservationId = (leaseId: string, estimate: Pico): string => `lease:${leaseId}:${estimate}`;

function parseLeaseReservation(id: string): { leaseId: string; estimate: Pico } | null {
  if (!id.startsWith("lease:")) return null;
  const cut = id.lastIndexOf(":");
  const estimate = id.slice(cut + 1);
  if (cut <= 6 || !/^\d+$/.test(estimate)) return null;
  return { leaseId: id.slice(6, cut), estimate: BigInt(estimate) };
}

export class LeaseBook {
  private leases = new Map<string, Lease>();
  private next = 0;

  grant(slice: Pico | null, now: number): LeaseGrant {
    const leaseId = `${now.toString(36)}.${(this.next++).toString(36)}`;
    this.leases.set(leaseId, { slice, expiresAt: now + LEASE_TTL_MS, settled: 0n, closedTotal: null });
    return { leaseId, slice: slice === null ? null : slice.toString(), ttlMs: LEASE_TTL_MS };
  }

  /** A request admitted under `leaseId` settled: its estimate no longer needs holding. */
  settle(leaseId: string, estimate: Pico): void {
    const l = this.leases.get(leaseId);
    if (!l) return;
    l.settled += estimate;
    this.dropIfDone(leaseId, l);
  }

  /** Settles a `lease:` reservation id; false when the id is an ordinary reservation. */
  release(reservationId: string): boolean {
    const leased = parseLeaseReservation(reservationId);
    if (!leased) return false;
    this.settle(leased.leaseId, leased.estimate);
    return true;
  }

  close(c: LeaseClose, now: number): void {
    const l = this.leases.get(c.leaseId);
    if (!l || !/^\d+$/.test(c.admittedTotal)) return;
    l.closedTotal = BigInt(c.admittedTotal);
    // A close ends the lease for its isolate: no more admissions under it.
    l.expiresAt = Math.min(l.expiresAt, now);
    this.dropIfDone(c.leaseId, l);
  }

  /** Budget held by leases (what admission counts with the reservations). */
  held(now: number): Pico {
    let sum = 0n;
    for (const [id, l] of this.leases) {
      if (l.closedTotal === null && now > l.expiresAt + UNCLOSED_TTL_MS) {
        this.leases.delete(id);
        continue;
      }
      const cap = l.closedTotal ?? l.slice;
      if (cap === null) continue;
      const h = cap - l.settled;
      if (h > 0n) sum += h;
    }
    return sum;
  }

  /** When the last lease granted so far ends (admin changes wait for it). */
  latestExpiry(): number {
    let max = 0;
    for (const l of this.leases.values()) if (l.expiresAt > max) max = l.expiresAt;
    return max;
  }

  private dropIfDone(id: string, l: Lease): void {
    if (l.closedTotal !== null && l.settled >= l.closedTotal) this.leases.delete(id);
  }
}

/**
 * Data storage cost of a file the gateway keeps for the caller (nano-banana's R2 save), reported
 * as `dataStorageCostUsd` apart from the inference cost (spec 2.8). Priced at Cloudflare R2
 * Standard list prices: one Class A operation for the write plus one month of storage.
 */
import { parseUsd, type Pico } from "./money";

/** R2 Standard: $4.50 per million Class A operations. */
export const R2_WRITE_PICO: Pico = parseUsd("0.0000045");
/** R2 Standard: $0.015 per GB-month (GB = 2^30 bytes). */
export const R2_GB_MONTH_PICO: Pico = parseUsd("0.015");
const GB = 1n << 30n;

/** Cost of writing `bytes` and keeping them for a month, rounded up to a whole pico-dollar. */
export function storageCostPico(bytes: number): Pico {
  const size = BigInt(Math.max(0, Math.ceil(bytes)));
  return R2_WRITE_PICO + (size * R2_GB_MONTH_PICO + GB - 1n) / GB;
}

/**
 * Regions and continents (contract section 8). A region is the provider's own name for where an
 * endpoint runs (`us-east-1`, `eu-central-1`, `europe-west4`, `eu` for OpenAI's EU data-residency
 * host, ...); the table below knows each one's continent, which residency rules (`EU`, `NA`, ...)
 * and the distance prior of routing (same continent near, others far) read. A global endpoint has
 * no region (`""`): it matches no `allow_regions` entry.
 */

export const CONTINENTS = ["NA", "SA", "EU", "AF", "AS", "OC"] as const;
export type Continent = (typeof CONTINENTS)[number];

export const isContinent = (v: string): v is Continent => (CONTINENTS as readonly string[]).includes(v);

/** Region -> continent. Broad codes (`us`, `eu`, `cn`) are the catalogue's fixed regions. */
const REGION_CONTINENT: Readonly<Record<string, Continent>> = {
  // broad
  us: "NA", eu: "EU", cn: "AS", jp: "AS", in: "AS", sg: "AS", au: "OC", ca: "NA", uk: "EU",
  // AWS
  "us-east-1": "NA", "us-east-2": "NA", "us-west-1": "NA", "us-west-2": "NA", "ca-central-1": "NA",
  "sa-east-1": "SA",
  "eu-central-1": "EU", "eu-central-2": "EU", "eu-west-1": "EU", "eu-west-2": "EU", "eu-west-3": "EU", "eu-north-1": "EU", "eu-south-1": "EU", "eu-south-2": "EU",
  "ap-northeast-1": "AS", "ap-northeast-2": "AS", "ap-northeast-3": "AS", "ap-southeast-1": "AS", "ap-south-1": "AS", "ap-south-2": "AS", "ap-east-1": "AS",
  "ap-southeast-2": "OC", "ap-southeast-4": "OC",
  "me-central-1": "AS", "il-central-1": "AS", "af-south-1": "AF",
  // Google Cloud
  "us-central1": "NA", "us-east1": "NA", "us-east4": "NA", "us-east5": "NA", "us-south1": "NA", "us-west1": "NA", "us-west4": "NA", "northamerica-northeast1": "NA",
  "southamerica-east1": "SA",
  "europe-west1": "EU", "europe-west2": "EU", "europe-west3": "EU", "europe-west4": "EU", "europe-west6": "EU", "europe-west8": "EU", "europe-west9": "EU", "europe-north1": "EU", "europe-central2": "EU", "europe-southwest1": "EU",
  "asia-northeast1": "AS", "asia-northeast3": "AS", "asia-east1": "AS", "asia-south1": "AS", "asia-southeast1": "AS", "me-west1": "AS",
  "australia-southeast1": "OC",
  // Azure
  eastus: "NA", eastus2: "NA", westus: "NA", westus3: "NA", northcentralus: "NA", southcentralus: "NA", canadaeast: "NA",
  brazilsouth: "SA",
  westeurope: "EU", northeurope: "EU", swedencentral: "EU", francecentral: "EU", germanywestcentral: "EU", switzerlandnorth: "EU", uksouth: "EU", norwayeast: "EU", polandcentral: "EU", spaincentral: "EU", italynorth: "EU",
  japaneast: "AS", koreacentral: "AS", southindia: "AS", southeastasia: "AS", uaenorth: "AS",
  australiaeast: "OC",
  southafricanorth: "AF",
};

/** Region names that mean "no particular region". */
const GLOBAL = new Set(["", "global"]);

/** The endpoint's region as reported (`metadata.used_region`): `""` for a global endpoint. */
export const normalRegion = (region: string | null | undefined): string => {
  const r = (region ?? "").trim().toLowerCase();
  return GLOBAL.has(r) ? "" : r;
};

/**
 * The continent of a region, or null for a global endpoint or a region the table does not know
 * (then a prefix guess: `eu-*`/`europe-*` EU, `us-*` NA, `ap-*`/`asia-*` AS).
 */
export function continentOf(region: string): Continent | null {
  const r = normalRegion(region);
  if (!r) return null;
  const known = REGION_CONTINENT[r];
  if (known) return known;
  if (/^(eu|europe)[-_]/.test(r)) return "EU";
  if (/^(us|northamerica|ca)[-_]/.test(r)) return "NA";
  if (/^(ap|asia)[-_]/.test(r)) return "AS";
  if (/^(sa|southamerica)[-_]/.test(r)) return "SA";
  if (/^(af|africa)[-_]/.test(r)) return "AF";
  if (/^australia[-_]/.test(r)) return "OC";
  return null;
}

/**
 * Whether a residency entry (a region, or a continent code such as `EU`) covers a region. A global
 * endpoint (`""`) is covered by nothing: residency cannot be promised for it.
 */
export function regionMatches(entry: string, region: string): boolean {
  const r = normalRegion(region);
  if (!r) return false;
  const e = entry.trim();
  if (isContinent(e)) return continentOf(r) === e;
  return e.toLowerCase() === r;
}

/** A residency entry is valid when it is a continent code or a region name (lower-case letters, digits, dashes). */
export const isRegionEntry = (entry: string): boolean => isContinent(entry) || /^[a-z][a-z0-9-]{1,40}$/.test(entry);

/** `EU_CENTRAL_1` (an env var suffix) -> `eu-central-1`. */
export const regionFromEnvSuffix = (suffix: string): string => suffix.toLowerCase().replace(/_/g, "-");
/** `eu-central-1` -> `EU_CENTRAL_1`. */
export const envSuffixOfRegion = (region: string): string => region.toUpperCase().replace(/[^A-Z0-9]/g, "_");

/**
 * The caller's continent: the request's `cf.continent` (Cloudflare's edge sets it); outside
 * production the `x-debug-caller-continent` header overrides it, so tests and benchmarks can play
 * callers anywhere. Null when unknown (then routing applies no distance prior).
 */
export function callerContinent(request: Request, production: boolean): Continent | null {
  if (!production) {
    const debug = request.headers.get("x-debug-caller-continent")?.trim().toUpperCase();
    if (debug && isContinent(debug)) return debug;
  }
  const ip = request.headers.get("cf-connecting-ip");
  const known = ip === null ? undefined : continentOfAddress.get(ip);
  if (known !== undefined) return known;
  const cf = (request as Request & { cf?: { continent?: unknown } }).cf;
  const c = typeof cf?.continent === "string" ? cf.continent.toUpperCase() : "";
  const continent = isContinent(c) ? c : null;
  if (ip !== null) {
    if (continentOfAddress.size >= MAX_ADDRESSES) continentOfAddress.clear();
    continentOfAddress.set(ip, continent);
  }
  return continent;
}

/**
 * The continents of callers' addresses this isolate has seen. The first read of `request.cf` makes
 * the runtime parse and freeze the whole `cf` object (about 2% of a chat request's CPU), while the
 * continent of an address is the same on each of its requests; the edge sets `CF-Connecting-IP`
 * and a client cannot forge it. A cache only: any isolate that has not seen an address reads `cf`.
 */
const continentOfAddress = new Map<string, Continent | null>();
const MAX_ADDRESSES = 10_000;

/**
 * Time to first token added for distance when ranking, until the caller's continent has evidence
 * for an endpoint (candidate-stats.ts): an endpoint on the caller's continent is near, a global one
 * in between, and one elsewhere as far as the table below says, so that without evidence the
 * endpoints rank, and fail over, in order of nearness (from Europe: North America before Asia).
 */
export const NEAR_PRIOR_MS = 20;
export const GLOBAL_PRIOR_MS = 60;

/**
 * Typical one-way network time (ms) between continents' main cloud regions, rounded: what matters
 * is the order it gives each continent (EU: NA, AF, AS, SA, OC), not the figures.
 */
const CONTINENT_DISTANCE_MS: Readonly<Record<Continent, Readonly<Record<Continent, number>>>> = {
  NA: { NA: NEAR_PRIOR_MS, SA: 120, EU: 90, AF: 200, AS: 150, OC: 160 },
  SA: { NA: 120, SA: NEAR_PRIOR_MS, EU: 190, AF: 250, AS: 260, OC: 270 },
  EU: { NA: 90, SA: 190, EU: NEAR_PRIOR_MS, AF: 100, AS: 180, OC: 250 },
  AF: { NA: 200, SA: 250, EU: 100, AF: NEAR_PRIOR_MS, AS: 220, OC: 280 },
  AS: { NA: 150, SA: 260, EU: 180, AF: 220, AS: NEAR_PRIOR_MS, OC: 110 },
  OC: { NA: 160, SA: 270, EU: 250, AF: 280, AS: 110, OC: NEAR_PRIOR_MS },
};

/** The distance prior of an endpoint for a caller: same continent near, a global endpoint between, others by distance. */
export function distancePriorMs(caller: Continent | null, region: string): number {
  if (!caller) return 0;
  const c = continentOf(region);
  if (!c) return GLOBAL_PRIOR_MS;
  return CONTINENT_DISTANCE_MS[caller][c];
}

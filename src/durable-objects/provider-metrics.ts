import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** Live per-provider metrics for routing (issue: routing). Implemented in src/routing/. */
export class ProviderMetrics extends DurableObject<Env> {}

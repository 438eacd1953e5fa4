/**
 * The one hook the request pipeline holds for the world bench's path timing: a request carries
 * it (`c.var.probe`, `GatewayRequest.probe`) and calls it at the moments the bench times. The
 * pipeline never imports the bench instruments themselves; src/routes/middleware/instruments.ts
 * hands out a recording probe only when path tracing is configured (never in production), and
 * the silent one otherwise, so an unconfigured request does no more than an empty call.
 */

/** The named moments of a request (`x-gateway-path-timing`, docs/benchmarks.md). */
export type ProbeMark = "key" | "exec" | "early" | "admitted" | "credits";

export interface RequestProbe {
  /** A named moment; the first mark of a name counts. */
  mark(name: ProbeMark): void;
  /** The upstream call starts now (the first attempt counts). */
  upstreamStart(): void;
  /** The upstream's first byte (first stream event, or the answer) arrived now. */
  upstreamFirst(): void;
}

const nothing = (): void => undefined;

/** The probe of every request that is not traced: it records nothing. */
export const silentProbe: RequestProbe = Object.freeze({ mark: nothing, upstreamStart: nothing, upstreamFirst: nothing });

/**
 * Build-time constants, replaced by esbuild (`define`) before the bundle is made, so a `false`
 * branch and what only it uses are dropped from the bundle.
 *
 * `__BENCH_INSTRUMENTS__`: whether the bundle carries the bench instruments (world latency, path
 * timing, object-call counts: src/lib/debug-world.ts, src/durable-objects/debug-latency.ts).
 * wrangler.jsonc sets it to `false`, so `wrangler deploy` ships without them; `npm run dev`,
 * `npm run bench` and the test suite build with `true` (docs/architecture.md, "Instruments").
 */
declare const __BENCH_INSTRUMENTS__: boolean;

// @ts-check
/**
 * Registry of fake upstream handlers (first match wins). Each module exports a `FakeRoute[]`.
 * Add one import + spread per module; keep provider behaviour inside its module.
 */

/** @type {import("./server.mjs").FakeRoute[]} */
export const routes = [
  // routes:begin
  // routes:end
];

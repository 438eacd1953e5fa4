import { describe, expect, it } from "vitest";
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { createApp } from "../app";
import { PrefixSplitRouter } from "./router";

type Entry = [method: string, path: string, handler: number];

/** A match as names: the handlers in order, each with its parameters (RegExpRouter keeps them in a stash). */
function matched(r: Result<number>): Array<[number, Record<string, string | undefined>]> {
  const [list, stash] = r as [Array<[number, Record<string, number | string>]>, string[] | undefined];
  return list.map(([h, params]) => [h, Object.fromEntries(Object.entries(params).map(([k, v]) => [k, stash ? stash[v as number] : (v as string)]))]);
}

const load = <R extends Router<number>>(router: R, routes: readonly Entry[]): R => {
  for (const [m, p, h] of routes) router.add(m, p, h);
  return router;
};

/** A path every route's pattern matches: parameters and wildcards filled in. */
const concrete = (pattern: string): string => pattern.replace(/:[^/{]+(\{[^}]*\})?/g, "p1").replace(/\*/g, "any/thing");

describe("the app's router", () => {
  const app = createApp();
  const routes: Entry[] = app.routes.map((r, i) => [r.method, r.path, i]);
  const paths = [...new Set(routes.map(([, p]) => concrete(p)))].concat(["/v1/videos/logs", "/v1/videos/logs/", "/v1/videos/logs/abc/content", "/v1/videos/vid_1", "/nope", "/v1/nope"]);

  it("matches every path of the app exactly as a trie router over all of its routes does", () => {
    const split = load(new PrefixSplitRouter<number>("/v1/videos/logs/"), routes);
    const trie = load(new TrieRouter<number>(), routes);
    expect(paths.length).toBeGreaterThan(150);
    for (const path of paths) {
      for (const method of ["GET", "POST", "PATCH", "DELETE", "OPTIONS", "HEAD"]) {
        expect(matched(split.match(method, path)), `${method} ${path}`).toEqual(matched(trie.match(method, path)));
      }
    }
  });

  it("matches the API outside the video content path with Hono's RegExpRouter", async () => {
    // Any answer will do (no bindings here): the request only makes the router match once.
    const res = await app.request("/v1/models", {}, {} as never);
    expect(res.status).toBeLessThan(600);
    expect(app.router).toBeInstanceOf(PrefixSplitRouter);
    expect(app.router.name).toBe("PrefixSplitRouter + SmartRouter + RegExpRouter");
  });

  it("refuses a prefix that does not end a path segment", () => {
    expect(() => new PrefixSplitRouter("/v1/videos/logs")).toThrow(/ends with/);
  });
});

/**
 * The app's router: Hono's default (its RegExpRouter, else its trie router) for every path but
 * those under one prefix, which a trie router holding every route matches.
 *
 * Why: Hono's RegExpRouter, one regular expression per method, refuses the pair
 * `GET /v1/videos/:id` and `GET /v1/videos/logs/:log_id/content` (a parameter and a fixed segment
 * at one level, both followed by more). Hono's default then falls back to its trie router for
 * every request, and walking the trie over the app's routes costs each chat request about 0.1 ms
 * of CPU (docs/benchmarks.md). A path outside the prefix cannot match a route whose path starts
 * with it, so leaving those routes out of the main router changes no match there; a path under
 * the prefix is matched against every route, as before.
 */
import type { Result, Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

export class PrefixSplitRouter<T> implements Router<T> {
  readonly #main: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  /** Every route, for the router of the prefix, which is built on the first path under it. */
  readonly #all: Array<[method: string, path: string, handler: T]> = [];
  #prefixRouter: Router<T> | null = null;

  /** `prefix` ends with "/": the routes it sets apart are those whose path starts with it. */
  constructor(readonly prefix: string) {
    if (!prefix.endsWith("/")) throw new Error(`a router prefix ends with "/": ${prefix}`);
  }

  /** Names the router that matches paths outside the prefix, as Hono's SmartRouter names its choice. */
  get name(): string {
    return `PrefixSplitRouter + ${this.#main.name}`;
  }

  add(method: string, path: string, handler: T): void {
    if (this.#prefixRouter) throw new Error("Can not add a route since the matcher is already built.");
    this.#all.push([method, path, handler]);
    if (!path.startsWith(this.prefix)) this.#main.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (!path.startsWith(this.prefix)) return this.#main.match(method, path);
    if (!this.#prefixRouter) {
      const trie = new TrieRouter<T>();
      for (const [m, p, h] of this.#all) trie.add(m, p, h);
      this.#prefixRouter = trie;
    }
    return this.#prefixRouter.match(method, path);
  }
}

/**
 * The dashboard's static files (stylesheet, browser scripts, favicon), served by the Worker from
 * a module generated out of public/ (scripts/static-files.mjs says why not Workers static assets).
 * Browsers keep them five minutes (what the dashboard's pages may lag behind a deploy), then revalidate by ETag.
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-types";
import { STATIC_FILES, type StaticFile } from "./generated/static-files";

const CACHE_CONTROL = "public, max-age=300";

/** Binary files decoded once per isolate. */
const decoded = new Map<string, Uint8Array>();

function bodyOf(path: string, file: StaticFile): string | Uint8Array {
  if ("text" in file) return file.text;
  let bytes = decoded.get(path);
  if (!bytes) {
    bytes = Uint8Array.from(atob(file.base64), (ch) => ch.charCodeAt(0));
    decoded.set(path, bytes);
  }
  return bytes;
}

/** Whether an `If-None-Match` header names this ETag (a list, weak validators, or `*`). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

export const staticFileRoutes = new Hono<AppEnv>();

for (const [path, file] of Object.entries(STATIC_FILES)) {
  staticFileRoutes.get(path, (c) => {
    const headers = { "content-type": file.type, etag: file.etag, "cache-control": CACHE_CONTROL, "x-content-type-options": "nosniff" };
    if (etagMatches(c.req.header("if-none-match"), file.etag)) return new Response(null, { status: 304, headers });
    return new Response(bodyOf(path, file), { headers });
  });
}

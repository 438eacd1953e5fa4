/**
 * What the video content route may answer (docs/security.md, "Video content"). The upstream of a
 * video job can be an organization's own server (BYOK `baseUrl`), so nothing it says about the
 * file is trusted: the answer is only ever a video type from this list, never the upstream's
 * `Content-Type` as given, and always with headers that stop a browser from rendering or running
 * it (`nosniff`, a sandboxing CSP, a download-safe `Content-Disposition`).
 */
import { httpOriginOf, type Env } from "../../env";
import { ApiError } from "../../errors/api-error";

/** The only media types the content route serves, with the file extension of each. */
const VIDEO_TYPES: Readonly<Record<string, string>> = { "video/mp4": "mp4", "video/webm": "webm" };

/** `video/mp4; codecs=...` -> `video/mp4`; lower case, parameters dropped. */
const mediaType = (header: string): string => (header.split(";")[0] ?? "").trim().toLowerCase();

/**
 * The type to serve for an upstream's `Content-Type`: the media type when it is an allowed video
 * type; the job's recorded type (always a video type) when the upstream names none or only
 * `application/octet-stream` (a generic type some file stores use, which browsers never render);
 * null for anything else, which the caller answers with a 502.
 */
export function servedVideoType(upstream: string | null, fallback: string): string | null {
  const type = upstream === null ? "" : mediaType(upstream);
  if (type === "" || type === "application/octet-stream") return isVideoType(fallback) ? mediaType(fallback) : "video/mp4";
  return isVideoType(type) ? type : null;
}

export const isVideoType = (type: string): boolean => Object.hasOwn(VIDEO_TYPES, mediaType(type));

export function notAVideo(what: string): ApiError {
  return new ApiError(502, `The video provider answered ${what}, not a video; it is not served.`, { type: "upstream_error", code: "upstream_not_video" });
}

/**
 * Headers of every content answer (200, 206, 416): the file can be played or downloaded, never
 * rendered as a page or run as a script, whatever its bytes.
 */
export function contentSafetyHeaders(headers: Headers, logId: string, type: string): void {
  headers.set("content-type", type);
  headers.set("x-content-type-options", "nosniff");
  headers.set("content-security-policy", "default-src 'none'; sandbox");
  headers.set("content-disposition", `inline; filename="${logId}.${VIDEO_TYPES[mediaType(type)] ?? "mp4"}"`);
  headers.set("cross-origin-resource-policy", "cross-origin");
  headers.set("referrer-policy", "no-referrer");
}

/**
 * `VIDEO_CONTENT_ORIGIN` as an origin (no trailing slash), or null when unset or not an http(s)
 * URL: a separate host (e.g. `https://media.gateway.example.com`, routed to the same Worker)
 * that video `content_url`s point at, so a video is never opened on the dashboard's origin.
 */
export const videoContentOrigin = (env: Env): string | null => httpOriginOf(env.VIDEO_CONTENT_ORIGIN);

/** The content route, the only path the video content origin serves. */
export const VIDEO_CONTENT_PATH = /^\/v1\/videos\/logs\/[^/]+\/content$/;

// @ts-check
/**
 * Fake OpenAI Videos API (Sora): `POST /openai/videos` (multipart form, like the official SDK)
 * -> video job; `GET /openai/videos/<id>` -> the job, completed; `GET /openai/videos/<id>/content`
 * -> deterministic MP4-typed bytes with ETag and byte ranges (206 / 416, `If-Range`).
 * A prompt containing `[[fake:video_fails]]` creates a job that the retrieve call reports failed.
 * Hostile upstreams (a BYOK `baseUrl` an organization controls), for the security suite:
 * `[[fake:video_type=<type>]]` serves the job's content with that `Content-Type` (`text/html`:
 * a page with `<script src=<video_script>>`, the `video_script` directive's URL; other types: the
 * text `alert(document.domain)`), and `[[fake:video_redirect]]` answers the content with a 302 to
 * `/internal/secret` on the same host, which serves `internal secret` as `video/mp4` (an internal
 * address the gateway must not follow).
 */
import { failEarly, parseDirectives } from "./fake-common.mjs";

/** @type {Map<string, { host: string, model: string, seconds: string, size: string, created_at: number, fails: boolean, type?: string, script?: string, redirect?: boolean }>} */
const jobs = new Map();
let seq = 0;
export const FAKE_VIDEO_LENGTH = 1000;

/** @param {string} id */
const videoBytes = (id) => {
  const buf = Buffer.alloc(FAKE_VIDEO_LENGTH);
  for (let i = 0; i < buf.length; i++) buf[i] = (i + id.length) % 256;
  return buf;
};
/** @param {string} id */
const etagOf = (id) => `"fake-${id}"`;

/** @param {number} status */
const errorBody = (status) => ({ error: { message: `fake video upstream error ${status}`, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: null } });

/** @param {import("node:http").ServerResponse} res @param {unknown} body @param {number} [status] */
function send(res, body, status = 200) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** @param {import("./server.mjs").FakeRequest} req */
const authorized = (req) => req.headers.authorization === "Bearer test-operator-key-openai" || String(req.headers.authorization ?? "").startsWith("Bearer byok-");

/**
 * A job as `host` (the path prefix: `openai`, or a regional `openai-<x>`) knows it: a job lives at
 * the endpoint it was created at, so another region's host answers 404.
 * @param {string} id @param {string} host
 */
const jobAt = (id, host) => {
  const job = jobs.get(id);
  return job && job.host === host ? job : undefined;
};

/** `openai`, or `openai-<anything>`: a regional host of OpenAI's (a provider key's base URL in the region tests). @param {string} provider */
const openaiHost = (provider) => provider === "openai" || provider.startsWith("openai-");

/** @param {string} id @param {string} host @param {"queued" | "completed"} requested */
function jobView(id, host, requested) {
  const job = jobAt(id, host);
  if (!job) return null;
  const status = requested === "completed" && job.fails ? "failed" : requested;
  const error = status === "failed" ? { code: "moderation_blocked", message: "Your request was blocked by our moderation system." } : null;
  return { id, object: "video", model: job.model, status, progress: status === "completed" ? 100 : 0, created_at: job.created_at, completed_at: status === "completed" ? job.created_at + 30 : null, expires_at: job.created_at + 3600, size: job.size, seconds: job.seconds, error, remixed_from_video_id: null };
}

/** @type {import("./server.mjs").FakeRoute[]} */
export const videoRoutes = [
  {
    name: "internal address a hostile video upstream redirects to",
    match: (req) => req.method === "GET" && req.provider === "internal" && req.path === "/secret",
    handle(_req, res) {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": "15" });
      res.end("internal secret");
    },
  },
  {
    name: "openai videos create",
    match: (req) => req.method === "POST" && openaiHost(req.provider) && req.path === "/videos",
    async handle(req, res) {
      if (!authorized(req)) return send(res, errorBody(401), 401);
      const type = String(req.headers["content-type"] ?? "");
      if (!type.startsWith("multipart/form-data")) return send(res, errorBody(400), 400);
      const form = await new Request("http://fake/", { method: "POST", headers: { "content-type": type }, body: req.rawBody }).formData();
      const prompt = String(form.get("prompt") ?? "");
      const d = parseDirectives(prompt, req.provider);
      if (failEarly(d, res, errorBody)) return;
      if (!prompt) return send(res, errorBody(400), 400);
      const id = `video_fake${++seq}`;
      const videoType = d.get("video_type");
      const script = d.get("video_script");
      jobs.set(id, {
        host: req.provider,
        model: String(form.get("model") ?? "sora-2"),
        seconds: String(form.get("seconds") ?? "4"),
        size: String(form.get("size") ?? "720x1280"),
        created_at: Math.floor(Date.now() / 1000),
        fails: prompt.includes("[[fake:video_fails]]"),
        ...(typeof videoType === "string" ? { type: videoType } : {}),
        ...(typeof script === "string" ? { script } : {}),
        redirect: d.has("video_redirect"),
      });
      send(res, jobView(id, req.provider, "queued"));
    },
  },
  {
    name: "openai videos retrieve",
    match: (req) => req.method === "GET" && openaiHost(req.provider) && /^\/videos\/[^/]+$/.test(req.path),
    handle(req, res) {
      if (!authorized(req)) return send(res, errorBody(401), 401);
      const view = jobView(req.path.split("/")[2] ?? "", req.provider, "completed");
      return view ? send(res, view) : send(res, errorBody(404), 404);
    },
  },
  {
    name: "openai videos content",
    match: (req) => req.method === "GET" && openaiHost(req.provider) && /^\/videos\/[^/]+\/content$/.test(req.path),
    handle(req, res) {
      if (!authorized(req)) return send(res, errorBody(401), 401);
      const id = req.path.split("/")[2] ?? "";
      const job = jobAt(id, req.provider);
      if (!job) return send(res, errorBody(404), 404);
      if (job.redirect) {
        res.writeHead(302, { location: `http://${req.headers.host}/internal/secret`, "content-type": "text/plain" });
        return res.end("moved");
      }
      if (job.type !== undefined) {
        const body = job.type.startsWith("text/html") ? `<!doctype html><html><body><h1>pwned</h1><script src="${job.script ?? "/x.js"}"></script></body></html>` : "alert(document.domain)";
        res.writeHead(200, { "content-type": job.type, "content-length": String(Buffer.byteLength(body)) });
        return res.end(body);
      }
      const bytes = videoBytes(id);
      const etag = etagOf(id);
      const base = { "content-type": "video/mp4", "accept-ranges": "bytes", etag };
      const range = req.headers.range;
      const ifRange = req.headers["if-range"];
      if (typeof range === "string" && (ifRange === undefined || ifRange === etag)) {
        const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
        if (m && (m[1] || m[2])) {
          let start = m[1] ? Number(m[1]) : bytes.length - Number(m[2]);
          let end = m[1] ? (m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1) : bytes.length - 1;
          if (start < 0) start = 0;
          if (start >= bytes.length || start > end) {
            res.writeHead(416, { ...base, "content-range": `bytes */${bytes.length}` });
            return res.end();
          }
          res.writeHead(206, { ...base, "content-range": `bytes ${start}-${end}/${bytes.length}`, "content-length": String(end - start + 1) });
          return res.end(bytes.subarray(start, end + 1));
        }
      }
      res.writeHead(200, { ...base, "content-length": String(bytes.length) });
      res.end(bytes);
    },
  },
];

/**
 * OpenAI Videos API (Sora): `POST {base}/videos` (multipart: prompt, model, seconds, size) ->
 * video job `{id, status: queued|in_progress|completed|failed, progress, ...}`;
 * `GET {base}/videos/{id}`; `GET {base}/videos/{id}/content` -> MP4 (byte ranges).
 */
import { asRecord, count, str } from "../../providers/json";
import { malformed } from "../../providers/errors";
import { joinUrl, type UpstreamCredential } from "../credentials";
import type { VideoAdapter, VideoJob } from "./types";

function parseJob(body: unknown): VideoJob {
  const r = asRecord(body);
  const id = str(r.id);
  const status = str(r.status);
  if (!id || !status) throw malformed("video job without id/status");
  const job: VideoJob = { upstreamId: id, status: status === "queued" || status === "in_progress" || status === "completed" || status === "failed" ? status : "in_progress", progress: count(r.progress) };
  const err = asRecord(r.error);
  const message = str(err.message);
  if (message) job.error = message;
  return job;
}

const auth = (cred: UpstreamCredential) => ({ authorization: `Bearer ${cred.apiKey}` });

export const openaiVideoAdapter: VideoAdapter = {
  seconds: ["4", "8", "12"],
  defaultSeconds: "4",
  defaultSize: "720x1280",
  create(req, cred) {
    const form = new FormData();
    form.set("prompt", req.prompt);
    form.set("model", req.externalModel);
    form.set("seconds", req.seconds);
    form.set("size", req.size);
    return { url: joinUrl(cred.baseUrl, "/videos"), init: { method: "POST", headers: auth(cred), body: form } };
  },
  status(upstreamId, cred) {
    return { url: joinUrl(cred.baseUrl, `/videos/${encodeURIComponent(upstreamId)}`), init: { method: "GET", headers: auth(cred) } };
  },
  content(upstreamId, cred, headers) {
    return { url: joinUrl(cred.baseUrl, `/videos/${encodeURIComponent(upstreamId)}/content`), init: { method: "GET", headers: { ...auth(cred), ...headers } } };
  },
  parseJob,
};

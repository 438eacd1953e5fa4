// @ts-check
/**
 * Replays of exact upstream answers. A test stores an answer with
 * `POST ${FAKE_UPSTREAM_URL}/__replay/<id>` and body
 * `{ status?, contentType?, json? , sse?: [{ event?, data }], events?: [{ eventType, body }] }`
 * (one of `json`, `sse`, Bedrock eventstream `events`); any later upstream request whose body
 * contains `[[replay:<id>]]` gets exactly that answer, whatever the provider prefix, so a test can
 * feed an adapter an event sequence recorded from (or documented by) the real provider. SSE frames
 * and eventstream messages are written one per chunk, as a provider flushes them.
 */
import { eventMessage } from "./eventstream.mjs";

/**
 * @typedef {object} Replay
 * @property {number} [status]
 * @property {string} [contentType]
 * @property {unknown} [json]
 * @property {Array<{ event?: string, data: unknown }>} [sse]
 * @property {Array<{ eventType: string, body: unknown }>} [events]
 */

/** @type {Map<string, Replay>} */
const replays = new Map();

/** Stores a replay (`POST /__replay/<id>`). @param {string} id @param {Buffer} raw */
export function storeReplay(id, raw) {
  replays.set(id, /** @type {Replay} */ (JSON.parse(raw.toString("utf8"))));
}

/** @param {string} text */
export function replayOf(text) {
  const m = /\[\[replay:([A-Za-z0-9_.-]+)\]\]/.exec(text);
  return m ? replays.get(m[1] ?? "") : undefined;
}

/** Writes a stored answer. @param {Replay} r @param {import("node:http").ServerResponse} res */
export async function writeReplay(r, res) {
  const status = r.status ?? 200;
  if (r.sse) {
    res.writeHead(status, { "content-type": r.contentType ?? "text/event-stream" });
    for (const f of r.sse) {
      const data = typeof f.data === "string" ? f.data : JSON.stringify(f.data);
      res.write(`${f.event ? `event: ${f.event}\n` : ""}data: ${data}\n\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
    return;
  }
  if (r.events) {
    res.writeHead(status, { "content-type": r.contentType ?? "application/vnd.amazon.eventstream" });
    for (const e of r.events) {
      res.write(eventMessage(e.eventType, e.body));
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": r.contentType ?? "application/json" });
  res.end(JSON.stringify(r.json ?? {}));
}

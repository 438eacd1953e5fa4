/**
 * The producer side of request bodies (projects with `logBodies`): the bodies of the requests an
 * isolate finishes meanwhile leave together, as one group, instead of one queue send per request.
 *
 * A request's bodies join the isolate's open group when its record is built, and the group's id
 * goes into the record (`extra.bodyBatch`), so a reader finds the bodies' R2 object from the
 * record alone (src/usage/bodies.ts). Per isolate at most one send is in flight: the group that
 * fills meanwhile leaves as soon as it returns, in the context of one of its own requests (a
 * request may do I/O only in its own context, so nobody awaits a promise another request
 * resolves: the others look every POLL_MS, on timers of their own, whether their group went, and
 * take over when nobody is sending). Serialising the bodies (the cap, the JSON text) happens in
 * that send, after the answers were handed back, never before an answer.
 *
 * A group larger than one queue message goes as several messages, numbered (`part`): each is one
 * R2 object per organization and hour, so a redelivered message rewrites the same object. A send
 * the queue refuses is retried a few times, then its bodies are dropped with an error log (the
 * records travel separately and are never at stake).
 */
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { capJson, type BodyCapture, type BodyEntry, type BodyMessage } from "./bodies";

/** Queue messages hold at most 128 KB; escaping (quotes, newlines) can nearly double a capped side. */
const MESSAGE_BYTES = 120_000;
/** Bytes per sendBatch (Queues take at most 256 KB and 100 messages per call). */
const SEND_BYTES = 200_000;
const SEND_MESSAGES = 100;
/** Longest a request waits for the send that carries its bodies before it stops waiting. */
const WAIT_MS = 15_000;
/** How often a request whose bodies ride another request's send looks whether it returned. */
const POLL_MS = 5;
/** Attempts at one sendBatch before its bodies are dropped. */
const SEND_ATTEMPTS = 3;

interface Item {
  capture: BodyCapture;
  done: boolean;
}

interface Group {
  id: string;
  items: Item[];
}

/** The group requests join now (null: none yet), and when the send in flight started (0: none). */
let open: Group | null = null;
let sendingSince = 0;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const encoder = new TextEncoder();

/**
 * Queues a request's bodies when its project keeps them: returns the id of the group they leave
 * with (the record keeps it as `extra.bodyBatch`), or null when the project keeps none.
 */
export function queueBodies(env: Env, waitUntil: (p: Promise<unknown>) => void, c: BodyCapture): string | null {
  if (!c.auth.project.logBodies) return null;
  open ??= { id: newId("bb"), items: [] };
  const item: Item = { capture: c, done: false };
  open.items.push(item);
  waitUntil(untilSent(env, item));
  return open.id;
}

/** Resolves once the item's group was sent (or dropped); sends the open group itself when nobody is sending. */
async function untilSent(env: Env, item: Item): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  // At least one macrotask: the answer is handed back first, and the requests finishing in this turn join.
  await pause(0);
  while (!item.done) {
    const now = Date.now();
    if (now >= deadline) {
      console.error("request bodies: the send carrying them did not return; no longer waited for");
      return;
    }
    // A send that never returned (its request was cancelled) stops blocking the others after the bound.
    if (sendingSince === 0 || now - sendingSince > WAIT_MS) await sendOpen(env);
    if (!item.done) await pause(POLL_MS);
  }
}

/** Sends the open group (in the calling request's context); its items are done afterwards, sent or dropped. */
async function sendOpen(env: Env): Promise<void> {
  const group = open;
  open = null;
  if (!group || group.items.length === 0) return;
  const since = Date.now();
  sendingSince = since;
  try {
    await sendMessages(env, groupMessages(group));
  } catch (err) {
    console.error(`request bodies of ${group.items.length} requests not queued; dropped`, err instanceof Error ? err.message : String(err));
  } finally {
    for (const i of group.items) i.done = true;
    if (sendingSince === since) sendingSince = 0;
  }
}

/** One request's bodies as they ride the queue, cut to fit one message; and its size there. */
function entryOf(c: BodyCapture): { entry: BodyEntry; bytes: number } {
  const entry: BodyEntry = {
    logId: c.logId,
    requestId: c.requestId,
    organizationId: c.auth.organization.id,
    projectId: c.auth.project.id,
    createdAt: c.createdAt,
    redact: c.auth.organization.compliance.redactBodies === true,
    request: capJson(c.request),
    response: capJson(c.response),
  };
  for (;;) {
    const bytes = encoder.encode(JSON.stringify(entry)).length;
    if (bytes <= MESSAGE_BYTES - 200) return { entry, bytes };
    // Halves the longer side until the entry fits (both sides stay marked truncated when cut).
    const side = entry.request.text.length >= entry.response.text.length ? entry.request : entry.response;
    side.text = side.text.slice(0, Math.floor(side.text.length / 2));
    side.truncated = true;
  }
}

/** A group's bodies packed into messages of at most MESSAGE_BYTES, numbered from 0. */
export function groupMessages(group: { id: string; items: ReadonlyArray<{ capture: BodyCapture }> }): Array<{ body: BodyMessage; bytes: number }> {
  const out: Array<{ body: BodyMessage; bytes: number }> = [];
  let current: { body: BodyMessage; bytes: number } | null = null;
  for (const { capture } of group.items) {
    const { entry, bytes } = entryOf(capture);
    if (!current || current.bytes + bytes > MESSAGE_BYTES) {
      current = { body: { batch: group.id, part: out.length, bodies: [] }, bytes: 100 };
      out.push(current);
    }
    current.body.bodies.push(entry);
    current.bytes += bytes + 1;
  }
  return out;
}

/** Messages in as few sendBatch calls as the limits allow, each retried a few times. */
async function sendMessages(env: Env, messages: ReadonlyArray<{ body: BodyMessage; bytes: number }>): Promise<void> {
  let batch: Array<{ body: BodyMessage }> = [];
  let bytes = 0;
  const send = async () => {
    const sending = batch;
    batch = [];
    bytes = 0;
    for (let attempt = 1; sending.length; attempt++) {
      try {
        await env.LOGS.sendBatch(sending);
        return;
      } catch (err) {
        if (attempt >= SEND_ATTEMPTS) throw err;
        await pause(50 * 4 ** (attempt - 1));
      }
    }
  };
  for (const m of messages) {
    if (batch.length === SEND_MESSAGES || (batch.length > 0 && bytes + m.bytes > SEND_BYTES)) await send();
    batch.push({ body: m.body });
    bytes += m.bytes;
  }
  await send();
}

/**
 * The producer side of request bodies (projects with `logBodies`): the bodies of the requests an
 * isolate finishes meanwhile leave together, as one group, instead of one queue send per request.
 *
 * A request's bodies join the isolate's open group when its record is built, and the group's id
 * and the request's place in it go into the record (`extra.bodyBatch`, `extra.bodyIndex`), so a
 * reader finds the bodies' R2 object from the record alone, and D1 can say whether they were
 * stored (src/usage/bodies.ts). The group's first request carries the group's send: one
 * `waitUntil` and one timer per group (a request may do I/O only in its own context; the others
 * only add their capture and go). The group stays open GROUP_MS, then leaves in that first
 * request's context; the requests finishing later open the next group. Serialising the bodies (the
 * cap, the JSON text) happens in that send, after the answers were handed back, never before an
 * answer.
 *
 * A group larger than one queue message goes as several messages, numbered (`part`), each holding
 * consecutive requests of the group (`first`: the place of its first): each is one R2 object per
 * organization and hour, so a redelivered message rewrites the same object. A send
 * the queue refuses is retried a few times, then the bodies of the messages not sent are dropped
 * with an error log and a mark per request that readers report (src/usage/bodies.ts
 * `markDropped`; the records travel separately and are never at stake).
 */
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { capJson, markDropped, type BodyCapture, type BodyEntry, type BodyMessage } from "./bodies";
import type { BodyPlace } from "./request-log";

/** Queue messages hold at most 128 KB (sizes estimated by serializedBytes, with room for the entry's other fields). */
const MESSAGE_BYTES = 120_000;
/** Bytes per sendBatch (Queues take at most 256 KB and 100 messages per call). */
const SEND_BYTES = 200_000;
const SEND_MESSAGES = 100;
/**
 * How long a group stays open after its first request joined. Longer groups mean fewer sends, R2
 * objects and gzip runs per request; the bodies appear that much later (they are read seconds
 * after the request anyway), and the first request's waitUntil lasts that much longer.
 */
const GROUP_MS = 200;
/** Attempts at one sendBatch before its bodies are dropped. */
const SEND_ATTEMPTS = 3;

interface Group {
  id: string;
  items: BodyCapture[];
}

/** The group requests join now (null: none open). */
let open: Group | null = null;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A string's size in a queue message (V8 serialization, the default content type): a byte per
 * character when every one fits Latin-1, else two (an upper bound either way).
 */
const serializedBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 * s.length : s.length);

/**
 * Queues a request's bodies when its project keeps them: returns the group they leave with and
 * the request's place in it (the record keeps them), or null when the project keeps none.
 */
export function queueBodies(env: Env, waitUntil: (p: Promise<unknown>) => void, c: BodyCapture): BodyPlace | null {
  if (!c.auth.project.logBodies) return null;
  if (!open) {
    const group: Group = { id: newId("bb"), items: [] };
    open = group;
    waitUntil(sendGroup(env, group));
  }
  open.items.push(c);
  return { group: open.id, index: open.items.length - 1 };
}

/** Closes the group after GROUP_MS and sends it (in the context of its first request). */
async function sendGroup(env: Env, group: Group): Promise<void> {
  await pause(GROUP_MS);
  if (open === group) open = null;
  const { unsent, error } = await sendMessages(env, groupMessages(group));
  if (unsent.length === 0) return;
  console.error(`request bodies of ${unsent.reduce((n, m) => n + m.bodies.length, 0)} requests not queued; dropped`, error instanceof Error ? error.message : String(error));
  // Only the messages not sent: those sent before will be stored. A mark makes readers say "dropped", not "not stored yet".
  await markDropped(env, unsent).catch((e: unknown) => {
    console.error("request bodies: the dropped mark was not written either", e instanceof Error ? e.message : String(e));
  });
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
    const bytes = serializedBytes(entry.request.text) + serializedBytes(entry.response.text) + 400;
    if (bytes <= MESSAGE_BYTES - 200) return { entry, bytes };
    // Halves the longer side until the entry fits (both sides stay marked truncated when cut).
    const side = entry.request.text.length >= entry.response.text.length ? entry.request : entry.response;
    side.text = side.text.slice(0, Math.floor(side.text.length / 2));
    side.truncated = true;
  }
}

/** A group's bodies packed in order into messages of at most MESSAGE_BYTES, numbered from 0. */
export function groupMessages(group: { id: string; items: readonly BodyCapture[] }): Array<{ body: BodyMessage; bytes: number }> {
  const out: Array<{ body: BodyMessage; bytes: number }> = [];
  let current: { body: BodyMessage; bytes: number } | null = null;
  for (const [index, capture] of group.items.entries()) {
    const { entry, bytes } = entryOf(capture);
    if (!current || current.bytes + bytes > MESSAGE_BYTES) {
      current = { body: { batch: group.id, part: out.length, first: index, bodies: [] }, bytes: 100 };
      out.push(current);
    }
    current.body.bodies.push(entry);
    current.bytes += bytes + 1;
  }
  return out;
}

/**
 * Messages in as few sendBatch calls as the limits allow, each retried a few times. A call still
 * refused ends the send: returns the messages not sent (that call's and those after it) and why.
 */
async function sendMessages(env: Env, messages: ReadonlyArray<{ body: BodyMessage; bytes: number }>): Promise<{ unsent: BodyMessage[]; error: unknown }> {
  const calls: BodyMessage[][] = [];
  let bytes = 0;
  for (const m of messages) {
    const call = calls[calls.length - 1];
    if (!call || call.length === SEND_MESSAGES || bytes + m.bytes > SEND_BYTES) {
      calls.push([m.body]);
      bytes = m.bytes;
    } else {
      call.push(m.body);
      bytes += m.bytes;
    }
  }
  for (const [i, call] of calls.entries()) {
    for (let attempt = 1; ; attempt++) {
      try {
        await env.LOGS.sendBatch(call.map((body) => ({ body })));
        break;
      } catch (err) {
        if (attempt >= SEND_ATTEMPTS) return { unsent: calls.slice(i).flat(), error: err };
        await pause(50 * 4 ** (attempt - 1));
      }
    }
  }
  return { unsent: [], error: null };
}

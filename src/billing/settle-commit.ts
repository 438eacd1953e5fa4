/**
 * Group commit of settlements into the key's object: a finished request's record (its log row,
 * its credit debit and its spend, ONE row of the key's outbox) is stored durably before its answer
 * ends, so a runtime that dies after the answer loses nothing that was answered.
 *
 * Per key and isolate at most one call is in flight. A settlement that arrives while none is sent
 * at the next macrotask (with everything that finished in the same turn), or at once when no other
 * record of the key is being committed (a lone request: nobody could join, and the timer cost it
 * CPU and a turn); one that arrives while a call is in flight joins the next group, which leaves as
 * soon as that call returns (within POLL_MS). So a lone request pays one round trip to the object
 * before its last byte, a busy key's requests ride together (one call per round trip per isolate,
 * however many requests finish meanwhile), and no answer waits for a batch window.
 *
 * Whoever finds no call in flight sends what waits, in its own context (it waits for its own
 * record anyway); the others wait for that call, at most DURABLE_WAIT_MS. When the object cannot be
 * reached the records go to the LOGS queue directly (billed and exported; the consumer applies a
 * record once, so a call that did land and a copy sent here are counted once).
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { keyStateStub, type SettleResult, type Settlement } from "../durable-objects/key-state";
import { sendLogMessages } from "../usage/log-queue";

/** At most this many records per call: bounds the call's size (a log row is ~1 KB). */
const MAX_GROUP = 500;
/** Longest a request waits for the call carrying its record before its answer ends anyway. */
const DURABLE_WAIT_MS = 10_000;
/** How often a request whose record rides another request's call looks whether that call returned. */
const POLL_MS = 2;

interface Entry {
  settlement: Settlement;
  done: boolean;
  result: SettleResult | undefined;
}

interface KeyCommits {
  /** Records waiting for the next call, in order of arrival. */
  waiting: Entry[];
  /** When the call in flight started (0: none). */
  sendingSince: number;
}

const commits = new Map<string, KeyCommits>();

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Stores a settlement in the key's object with the records that finish meanwhile; resolves with
 * its result once it is durable (undefined when the object was not reached and the record went to
 * the queue, or the wait bound passed). Never rejects.
 *
 * Requests only share plain data here, never a promise: Workers run the continuation of a promise
 * in the context of whoever resolved it, and a request may do I/O only in its own. So whoever finds
 * no call in flight sends everything waiting, in its own context, and the others look every
 * POLL_MS (a timer of their own) whether their record went along.
 */
export async function commitSettlement(env: Env, auth: KeyContext, settlement: Settlement): Promise<SettleResult | undefined> {
  const keyId = auth.key.id;
  let c = commits.get(keyId);
  const busy = c !== undefined;
  if (!c) {
    c = { waiting: [], sendingSince: 0 };
    commits.set(keyId, c);
  }
  const entry: Entry = { settlement, done: false, result: undefined };
  c.waiting.push(entry);
  const deadline = Date.now() + DURABLE_WAIT_MS;
  // On a busy key even "at once" waits one macrotask: the requests finishing in this turn join the call.
  if (busy) await pause(0);
  while (!entry.done) {
    const now = Date.now();
    if (now >= deadline) {
      console.error("settlement commit still pending; the answer ends without waiting for it");
      return undefined;
    }
    // A call that never returned (its request was cancelled) stops blocking the others after the bound.
    if (c.sendingSince === 0 || now - c.sendingSince > DURABLE_WAIT_MS) await sendWaiting(env, keyId, c);
    else await pause(POLL_MS);
  }
  if (c.waiting.length === 0 && c.sendingSince === 0 && commits.get(keyId) === c) commits.delete(keyId);
  return entry.result;
}

/** Sends what waits for the key (at most MAX_GROUP records), in the calling request's context. */
async function sendWaiting(env: Env, keyId: string, c: KeyCommits): Promise<void> {
  const group = c.waiting.splice(0, MAX_GROUP);
  if (group.length === 0) return;
  const since = Date.now();
  c.sendingSince = since;
  const items = group.map((e) => e.settlement);
  try {
    const results = await keyStateStub(env, keyId).settleMany(items);
    group.forEach((e, i) => (e.result = results[i]));
  } catch (err) {
    console.error("settlement commit failed; records sent to the log queue", err instanceof Error ? err.message : String(err));
    await toQueue(env, items);
  } finally {
    for (const e of group) e.done = true;
    if (c.sendingSince === since) c.sendingSince = 0;
  }
}

/** The records of a group the object did not take: billed and exported through the queue. */
async function toQueue(env: Env, items: readonly Settlement[]): Promise<void> {
  const entries = items.flatMap((s) => (s.outbox ? [{ row: s.outbox.row, debit: s.outbox.creditsPico.toString() }] : []));
  if (!entries.length) return;
  try {
    await sendLogMessages(env, entries);
  } catch (err) {
    console.error("log queue send failed; records lost", err instanceof Error ? err.message : String(err));
  }
}

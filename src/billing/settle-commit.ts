/**
 * Group commit of settlements into the key's object: a finished request's record (its log row,
 * its credit debit and its spend, ONE row of the key's outbox) is stored durably before its answer
 * ends, so a runtime that dies after the answer loses nothing that was answered.
 *
 * Per key and isolate at most one call is in flight. A settlement that arrives while none is sent
 * at the next macrotask (with everything that finished in the same turn); one that arrives while a
 * call is in flight joins the next group, which leaves as soon as that call returns. So a lone
 * request pays one round trip to the object before its last byte, a busy key's requests ride
 * together (one call per round trip per isolate, however many requests finish meanwhile), and the
 * answer never waits for a timer.
 *
 * The request that opens a group sends it, in its own context (it waits for its own record
 * anyway); the others wait for that call, at most DURABLE_WAIT_MS. When the object cannot be
 * reached the records go to the LOGS queue directly (billed and exported; the consumer applies a
 * record once, so a call that did land and a copy sent here are counted once).
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { keyStateStub, type SettleResult, type Settlement } from "../durable-objects/key-state";
import { sendLogMessages } from "../usage/log-queue";

/** A group this large leaves without waiting for more: bounds the call's size (a log row is ~1 KB). */
const MAX_GROUP = 500;
/** Longest a request waits for the call carrying its record before its answer ends anyway. */
const DURABLE_WAIT_MS = 10_000;

interface Entry {
  settlement: Settlement;
  resolve: (r: SettleResult | undefined) => void;
}

interface KeyCommits {
  /** The group still open for joiners (null once it left). */
  open: Entry[] | null;
  /** The call in flight (never rejects), if any. */
  sending: Promise<void> | null;
}

const commits = new Map<string, KeyCommits>();

/**
 * Stores a settlement in the key's object as part of the next group; resolves with its result once
 * it is durable (undefined when the object was not reached and the record went to the queue, or
 * the wait bound passed). Never rejects.
 */
export function commitSettlement(env: Env, auth: KeyContext, settlement: Settlement): Promise<SettleResult | undefined> {
  const keyId = auth.key.id;
  let c = commits.get(keyId);
  if (!c) {
    c = { open: null, sending: null };
    commits.set(keyId, c);
  }
  const durable = new Promise<SettleResult | undefined>((resolve) => {
    const entry: Entry = { settlement, resolve };
    if (c.open && c.open.length < MAX_GROUP) {
      c.open.push(entry);
      return;
    }
    const group = [entry];
    c.open = group;
    const previous = c.sending;
    const send = sendGroup(env, keyId, c, group, previous);
    c.sending = send;
    void send.then(() => {
      if (c.sending === send && c.open === null) commits.delete(keyId);
    });
  });
  return bounded(durable);
}

async function sendGroup(env: Env, keyId: string, c: KeyCommits, group: Entry[], previous: Promise<void> | null): Promise<void> {
  // Even "at once" waits one macrotask: the requests finishing in this turn join the group.
  if (previous) await previous;
  else await new Promise((r) => setTimeout(r, 0));
  if (c.open === group) c.open = null;
  const items = group.map((e) => e.settlement);
  try {
    const results = await keyStateStub(env, keyId).settleMany(items);
    group.forEach((e, i) => e.resolve(results[i]));
  } catch (err) {
    console.error("settlement commit failed; records sent to the log queue", err instanceof Error ? err.message : String(err));
    await toQueue(env, items);
    group.forEach((e) => e.resolve(undefined));
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

function bounded<T>(p: Promise<T | undefined>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      console.error("settlement commit still pending; the answer ends without waiting for it");
      resolve(undefined);
    }, DURABLE_WAIT_MS);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * The stub of a key's KeyState object, in a module of its own so that the producers of the log
 * queue (which the object itself also uses) can reach the object without importing it.
 */
import type { Env } from "../env";
import { countDoCall } from "./debug-latency";

/** idFromName hashes the name; keep the ids of recently used keys (they are plain values). */
const ids = new Map<string, DurableObjectId>();

export function keyStateStub(env: Env, keyId: string) {
  countDoCall();
  let id = ids.get(keyId);
  if (!id) {
    if (ids.size >= 10_000) ids.clear();
    id = env.KEY_STATE.idFromName(keyId);
    ids.set(keyId, id);
  }
  return env.KEY_STATE.get(id);
}

/**
 * Response cache (KV binding CACHE). Checked only after authentication, spend admission and
 * access rules, never before.
 *
 * A request is cacheable when ALL of:
 *  - the project has `cachingEnabled`;
 *  - `temperature` is 0 or unset (sampling at a temperature asks for variety);
 *  - no `x-no-cache: true` header;
 *  - `n` is 1 or unset;
 *  - `store` is not true (the caller asked the provider to keep the completion: it must reach it).
 * Key: SHA-256 over organization + project + the full normalized request (messages, tools,
 * every parameter, the model string as sent, which includes a pinned provider, and whether it is
 * streamed; `verbosity`, `prediction`, `audio` and `modalities` included). Left out because they
 * do not change the answer: `user`, `stream_options`, and the bookkeeping/routing extras
 * `safety_identifier`, `prompt_cache_key`, `metadata`, `store` and `service_tier` (`auto` or
 * `default` only). A request without them hashes as it always did.
 * Values: non-streamed answers as their parsed choices, streamed answers as their event sequence,
 * stored only when the stream completed (every choice finished, no upstream error, client still
 * there). TTL is the project's `cacheDurationSeconds` (KV stores at least 60 s; the exact expiry
 * is enforced on read).
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import type { ChatRequest, Choice, NormalizedUsage, StreamEvent } from "../providers/types";
import { sha256Hex } from "../lib/crypto";

export interface CachedAnswerBase {
  /** Provider/model that produced the answer (reported in metadata). */
  provider: string;
  model: string;
  underlyingModel: string;
  region: string | null;
  /**
   * Set when a fallback model (`models`) answered instead of the requested one: the id a replay
   * answers under, as the first answer did. Unset, the requested model served, and a replay names
   * it as the door it comes through does (the caller's spelling or the canonical id).
   */
  fallbackModel?: string;
  usage: NormalizedUsage;
  storedAt: number;
  expiresAt: number;
}

export type CachedAnswer =
  | (CachedAnswerBase & { kind: "json"; choices: Choice[] })
  | (CachedAnswerBase & { kind: "stream"; events: StreamEvent[] });

const KV_MIN_TTL_SECONDS = 60;
const KEY_PREFIX = "chat:v1:";

export function isCacheable(auth: KeyContext, req: ChatRequest, headers: Headers): boolean {
  if (!auth.project.cachingEnabled || auth.project.cacheDurationSeconds <= 0) return false;
  if ((headers.get("x-no-cache") ?? "").trim().toLowerCase() === "true") return false;
  if (req.temperature !== undefined && req.temperature !== 0) return false;
  if (req.store === true) return false;
  return (req.n ?? 1) <= 1;
}

/** JSON with object keys sorted, so equal requests hash equally whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`).join(",")}}`;
}

export async function cacheKey(auth: KeyContext, req: ChatRequest): Promise<string> {
  const {
    user: _user, stream_options: _so, safety_identifier: _sid, prompt_cache_key: _pck, metadata: _md, store: _store, service_tier: _tier,
    ...rest
  } = req;
  const normalized = { ...rest, stream: req.stream === true };
  return KEY_PREFIX + (await sha256Hex(stableStringify({ org: auth.organization.id, project: auth.project.id, request: normalized })));
}

export async function readCache(env: Env, key: string, now = Date.now()): Promise<CachedAnswer | null> {
  try {
    const value = await env.CACHE.get<CachedAnswer>(key, "json");
    if (!value || value.expiresAt <= now) return null;
    return value;
  } catch (err) {
    console.warn("cache read failed", err instanceof Error ? err.message : String(err));
    return null;
  }
}

export async function writeCache(env: Env, key: string, answer: CachedAnswer): Promise<void> {
  const ttl = Math.max(KV_MIN_TTL_SECONDS, Math.ceil((answer.expiresAt - Date.now()) / 1000));
  try {
    await env.CACHE.put(key, JSON.stringify(answer), { expirationTtl: ttl });
  } catch (err) {
    console.warn("cache write failed", err instanceof Error ? err.message : String(err));
  }
}

/**
 * How long an upstream attempt may take (pure; docs/routing-and-cache.md, "Timeouts"):
 *
 * - first byte: from the request to the first event of a stream, or to the answer of a
 *   non-streamed request (which arrives whole, so its bound adds the time to generate it). A
 *   provider that accepted the connection and never answers costs this, not the whole-answer
 *   timeout: the attempt is cancelled and the request fails over at once.
 * - whole answer: the operator's `UPSTREAM_TIMEOUT_MS` (120 s), the ceiling of every attempt.
 * - between chunks: once a stream has started, a silence longer than this ends it with an error.
 * - hedge: with the project's `hedging` on, the next candidate starts as well when the first has
 *   not answered by then.
 *
 * The first-byte bound comes from the provider+model's measured time to first token (4 x its p99,
 * within [FIRST_BYTE_TIMEOUT_MIN_MS, FIRST_BYTE_TIMEOUT_MAX_MS]) or, before there is evidence,
 * FIRST_BYTE_TIMEOUT_MS; it is longer for requests that think before their first token and for
 * large prompts. A caller may choose its own (headers, project settings), within the operator's
 * bounds; a timeout shorter than the derived one is the caller's choice and does not count
 * against the provider's health.
 */
import type { Env } from "../env";
import { badRequest } from "../errors/api-error";
import type { ChatRequest } from "../providers/types";
import type { RouteStats } from "./score";

const DEFAULTS = {
  FIRST_BYTE_TIMEOUT_MS: 15_000,
  FIRST_BYTE_TIMEOUT_MIN_MS: 10_000,
  FIRST_BYTE_TIMEOUT_MAX_MS: 30_000,
  UPSTREAM_TIMEOUT_MS: 120_000,
  STREAM_IDLE_TIMEOUT_MS: 30_000,
  TIMEOUT_OVERRIDE_MIN_MS: 1_000,
  TIMEOUT_OVERRIDE_MAX_MS: 300_000,
  HEDGE_AFTER_MS: 2_000,
} as const;
type SettingName = keyof typeof DEFAULTS;

/** Measured p99 x this is the first-byte bound (before the bounds apply). */
const P99_FACTOR = 4;
/** A request that thinks before its first token (reasoning) waits this much longer. */
const THINKING_FACTOR = 3;
/** Prefill of a large prompt: one more second per this many prompt tokens beyond the first. */
const PROMPT_TOKENS_PER_SECOND_OF_PREFILL = 10_000;
/** A non-streamed answer of unknown length is assumed this long when it sets no max_tokens. */
const ASSUMED_OUTPUT_TOKENS = 512;
/** Output pace assumed without evidence (tokens/s); a measured pace counts at half (the slow side). */
const ASSUMED_TOKENS_PER_SECOND = 40;

export const FIRST_BYTE_HEADER = "x-first-byte-timeout-ms";
export const TOTAL_HEADER = "x-timeout-ms";

/** Operator settings (Worker vars), each with its documented default. */
export type TimeoutSettings = Record<SettingName, number>;

/** Per env object: vars do not change while an isolate lives, and every attempt reads them. */
const settingsOf = new WeakMap<Env, Readonly<TimeoutSettings>>();

export function timeoutSettings(env: Env): Readonly<TimeoutSettings> {
  const known = settingsOf.get(env);
  if (known) return known;
  const read = (name: SettingName): number => {
    const raw = env[name];
    const v = typeof raw === "string" ? Number(raw) : NaN;
    return Number.isFinite(v) && v > 0 ? v : DEFAULTS[name];
  };
  const settings = Object.freeze(Object.fromEntries((Object.keys(DEFAULTS) as SettingName[]).map((k) => [k, read(k)])) as TimeoutSettings);
  settingsOf.set(env, settings);
  return settings;
}

/** The project's own defaults (master API), each null when unset. */
export interface ProjectTimeouts {
  firstByteTimeoutMs?: number | null;
  timeoutMs?: number | null;
  hedging?: boolean;
}

/** What one request allows its attempts; computed once, before admission (bad headers are a 400). */
export interface RequestTimeouts {
  settings: TimeoutSettings;
  /** Chosen by the caller (header, else project), null to derive per candidate. */
  firstByteMs: number | null;
  totalMs: number;
  /** The caller chose `totalMs` (header or project): it then bounds a whole stream too. */
  totalChosen: boolean;
  interChunkMs: number;
  hedging: boolean;
  stream: boolean;
  /** The request asks for reasoning (an effort above minimal). */
  thinkingRequested: boolean;
  promptTokens: number;
  maxTokens: number | undefined;
}

function headerMs(headers: Headers, name: string, s: TimeoutSettings): number | null {
  const raw = headers.get(name);
  if (raw === null) return null;
  const v = raw.trim();
  const n = /^\d{1,9}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < s.TIMEOUT_OVERRIDE_MIN_MS || n > s.TIMEOUT_OVERRIDE_MAX_MS) {
    throw badRequest(
      `Header '${name}' must be a whole number of milliseconds from ${s.TIMEOUT_OVERRIDE_MIN_MS} to ${s.TIMEOUT_OVERRIDE_MAX_MS}.`,
      name,
      "invalid_timeout",
    );
  }
  return n;
}

/** A caller's value within the operator's bounds (a project setting saved under wider bounds is clamped). */
const bounded = (v: number, s: TimeoutSettings): number => Math.min(s.TIMEOUT_OVERRIDE_MAX_MS, Math.max(s.TIMEOUT_OVERRIDE_MIN_MS, v));

export function requestTimeouts(
  env: Env,
  headers: Headers,
  project: ProjectTimeouts,
  req: Pick<ChatRequest, "reasoning_effort" | "stream">,
  needs: { promptTokens: number; maxTokens: number | undefined },
): RequestTimeouts {
  const settings = timeoutSettings(env);
  const headerFirst = headerMs(headers, FIRST_BYTE_HEADER, settings);
  const headerTotal = headerMs(headers, TOTAL_HEADER, settings);
  const projectTotal = project.timeoutMs ? bounded(project.timeoutMs, settings) : null;
  const projectFirst = project.firstByteTimeoutMs ? bounded(project.firstByteTimeoutMs, settings) : null;
  const totalMs = headerTotal ?? projectTotal ?? settings.UPSTREAM_TIMEOUT_MS;
  const first = headerFirst ?? projectFirst;
  return {
    settings,
    firstByteMs: first === null ? null : Math.min(first, totalMs),
    totalMs,
    totalChosen: headerTotal !== null || projectTotal !== null,
    interChunkMs: Math.min(settings.STREAM_IDLE_TIMEOUT_MS, totalMs),
    hedging: project.hedging === true,
    stream: req.stream === true,
    thinkingRequested: req.reasoning_effort === "low" || req.reasoning_effort === "medium" || req.reasoning_effort === "high",
    promptTokens: needs.promptTokens,
    maxTokens: needs.maxTokens,
  };
}

/** The bounds of one attempt on one candidate. */
export interface AttemptTimeouts {
  firstByteMs: number;
  /** The bound the gateway derived for this candidate; a timeout at or past it is the provider's fault. */
  derivedFirstByteMs: number;
  totalMs: number;
  interChunkMs: number;
  /** When to start the next candidate as well (hedging on), else null. */
  hedgeAfterMs: number | null;
}

/**
 * `reasons`: the model thinks before answering unless told not to (a reasoning model without an
 * effort of none/minimal).
 */
export function attemptTimeouts(rt: RequestTimeouts, stats: RouteStats | null, reasons: boolean, effortOff: boolean): AttemptTimeouts {
  const s = rt.settings;
  const thinking = rt.thinkingRequested || (reasons && !effortOff);
  const p99 = stats?.ttftP99Ms ?? null;
  const base = p99 !== null ? Math.min(s.FIRST_BYTE_TIMEOUT_MAX_MS, Math.max(s.FIRST_BYTE_TIMEOUT_MIN_MS, P99_FACTOR * p99)) : s.FIRST_BYTE_TIMEOUT_MS;
  const prefillMs = Math.max(0, rt.promptTokens - PROMPT_TOKENS_PER_SECOND_OF_PREFILL) / PROMPT_TOKENS_PER_SECOND_OF_PREFILL * 1000;
  // A non-streamed answer arrives whole: its wait includes generating it.
  const measuredPace = stats?.throughput ? stats.throughput / 2 : null;
  const generationMs = rt.stream ? 0 : ((rt.maxTokens ?? ASSUMED_OUTPUT_TOKENS) / (measuredPace ?? ASSUMED_TOKENS_PER_SECOND)) * 1000;
  const derived = Math.round((thinking ? THINKING_FACTOR : 1) * base + prefillMs + generationMs);
  const firstByteMs = Math.min(rt.firstByteMs ?? derived, rt.totalMs);
  let hedgeAfterMs: number | null = null;
  if (rt.hedging) {
    const p95 = stats?.ttftP95Ms ?? null;
    hedgeAfterMs = Math.min(Math.round((p95 ?? s.HEDGE_AFTER_MS) * (thinking ? THINKING_FACTOR : 1) + prefillMs + generationMs), firstByteMs);
  }
  return { firstByteMs, derivedFirstByteMs: Math.min(derived, rt.totalMs), totalMs: rt.totalMs, interChunkMs: rt.interChunkMs, hedgeAfterMs };
}

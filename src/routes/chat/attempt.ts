/**
 * One upstream attempt: credential -> adapter request -> fetch with a per-attempt timeout ->
 * parsed answer, or a classified failure (src/routing/failover.ts). A streamed attempt succeeds
 * once its first event arrived; until then it can still fail over.
 */
import type { Env } from "../../env";
import type { ChatRequest, ParsedCompletion, StreamEvent, UpstreamCall, UpstreamTarget } from "../../providers/types";
import { adapterFor } from "../../providers/registry";
import { MalformedUpstreamError } from "../../providers/errors";
import { ApiError } from "../../errors/api-error";
import type { Candidate } from "../../routing/candidates";
import { credentialHash, resolveCredential } from "../../routing/credentials";
import {
  classifyHttp,
  malformedFailure,
  networkFailure,
  retryAfterSeconds,
  streamFailure,
  timeoutFailure,
  unsupportedInput,
  type AttemptFailure,
} from "../../routing/failover";
import { silentProbe, type RequestProbe } from "../../lib/probe";
import { routeStats } from "../../routing/live-metrics";
import { metricsProviderId } from "../../routing/candidate-stats";
import { attemptTimeouts, requestTimeouts, timeoutSettings, type AttemptTimeouts, type RequestTimeouts } from "../../routing/timeouts";

/**
 * The whole-answer ceiling of an attempt (UPSTREAM_TIMEOUT_MS, 120 s); the first-byte and
 * between-chunk bounds are src/routing/timeouts.ts. Embeddings use it as their only bound.
 */
export const upstreamTimeoutMs = (env: Env): number => timeoutSettings(env).UPSTREAM_TIMEOUT_MS;

/** The bounds of `cand`'s attempt at this request (`rt`: the request's, or the defaults). */
export function timeoutsFor(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, rt?: RequestTimeouts): AttemptTimeouts {
  const request = rt ?? requestTimeouts(env, new Headers(), {}, { ...req, stream }, { promptTokens: 0, maxTokens: req.max_completion_tokens ?? req.max_tokens });
  const effortOff = req.reasoning_effort === "none" || req.reasoning_effort === "minimal";
  // A reasoning mapping without selectable modes (OpenAI's o-series) thinks unless told not to;
  // one with modes (Anthropic's extended thinking) thinks only when asked.
  const reasonsByDefault = cand.mapping.reasoning && !cand.mapping.reasoningModes?.length;
  return attemptTimeouts(request, routeStats(metricsProviderId(cand), cand.modelId), reasonsByDefault, effortOff);
}

export type AttemptResult = (
  | { ok: true; kind: "json"; target: UpstreamTarget; parsed: ParsedCompletion; upstreamMs: number }
  | {
      ok: true;
      kind: "stream";
      target: UpstreamTarget;
      first: StreamEvent;
      iterator: AsyncIterator<StreamEvent>;
      /** Aborts the upstream request (client went away, idle timeout). */
      abort: AbortController;
      /** Time to the first event. */
      upstreamMs: number;
      /** Longest silence between two events once streaming. */
      interChunkMs: number;
      /** Epoch ms by which the whole stream must end (a whole-answer timeout the caller chose), else null. */
      deadlineAt: number | null;
    }
  | { ok: false; failure: AttemptFailure; upstreamMs: number }
) & {
  /** Fingerprint of the upstream credential used (`routing[].apiKeyHash`), once it was resolved. */
  apiKeyHash?: string;
};

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Some providers quote the credential they got ("Incorrect API key provided: sk-..."): never pass it on. */
export const redactCredential = (message: string, apiKey: string | null | undefined): string =>
  apiKey && apiKey.length >= 4 ? message.split(apiKey).join("[redacted]") : message;

/**
 * `clientSignal` (the client went away) aborts the upstream request too; the caller tells a
 * client abort from a provider failure by the signal, and settles accordingly. `timeouts`: the
 * request's (src/routing/timeouts.ts); the attempt is cancelled when its first byte does not come
 * within the bound derived for this candidate.
 */
export async function runAttempt(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, clientSignal?: AbortSignal, timeouts?: RequestTimeouts, probe: RequestProbe = silentProbe): Promise<AttemptResult> {
  const bounds = timeoutsFor(env, req, cand, stream, timeouts);
  const timeoutMs = bounds.firstByteMs;
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const timeout = () => timeoutFailure(timeoutMs, timeoutMs >= bounds.derivedFirstByteMs);
  const onClientGone = () => abort.abort();
  if (clientSignal?.aborted) abort.abort();
  clientSignal?.addEventListener("abort", onClientGone, { once: true });
  let apiKeyHash: string | undefined;
  const fail = (failure: AttemptFailure): AttemptResult => {
    clearTimeout(timer);
    clientSignal?.removeEventListener("abort", onClientGone);
    abort.abort();
    return { ok: false, failure, upstreamMs: elapsed(), ...(apiKeyHash ? { apiKeyHash } : {}) };
  };

  let target: UpstreamTarget;
  let upstream: UpstreamCall | null;
  const adapter = adapterFor(cand.provider.wireFormat);
  try {
    const cred = await resolveCredential(env, cand.credential, cand.provider.baseUrl);
    apiKeyHash = await credentialHash(env, cred.apiKey);
    target = { provider: cand.provider, mapping: cand.mapping, model: cand.model, baseUrl: cred.baseUrl, apiKey: cred.apiKey, settings: cred.settings, credentialOwner: cred.owner };
    upstream = await adapter.buildCall(req, target, { stream, signal: abort.signal });
  } catch (err) {
    // The adapter cannot carry this input (a 4xx it raised): another provider may; if none can,
    // the caller gets that 400 rather than a 502.
    if (err instanceof ApiError && err.status < 500) return fail(unsupportedInput(err.message));
    // A credential we cannot decrypt or a request we cannot build: not the provider's fault, but
    // another provider may still work.
    return fail({ ...networkFailure(`could not prepare the upstream request: ${errorMessage(err)}`), providerFault: false });
  }

  let res: Response;
  probe.upstreamStart();
  try {
    // Redirects are never followed: an organization's upstream URL passed the SSRF guard, the
    // place it redirects to did not (docs/security.md). A redirect is an upstream error.
    // Every call carries `redirect: "manual"` (its type says so). Not `fetch(request)`: that
    // copies its Request into a new one.
    const sending = fetch(upstream.url, upstream.init);
    // The runtime holds the body's bytes now: its string (a coding agent's is hundreds of
    // kilobytes) need not live, and be copied by every garbage collection, through the upstream's wait.
    upstream = null;
    res = await sending;
  } catch (err) {
    return fail(timedOut ? timeout() : networkFailure(`network error: ${errorMessage(err)}`));
  }
  if (res.status >= 300 && res.status < 400) {
    void res.body?.cancel();
    return fail({ ...networkFailure(`the provider answered with a redirect (HTTP ${res.status}); redirects are not followed`), errorType: "upstream_redirect" });
  }

  if (!res.ok) {
    let text = "";
    try {
      text = await res.text();
    } catch {
      // body lost; the status says enough
    }
    const info = adapter.parseError(res.status, text);
    return fail(classifyHttp(res.status, cand.credential.source, redactCredential(info.message, target.apiKey), info.type, retryAfterSeconds(res.headers.get("retry-after"))));
  }

  if (!stream) {
    try {
      const body: unknown = await res.json();
      probe.upstreamFirst();
      const parsed = adapter.parseResponse(body, target, req);
      clearTimeout(timer);
      clientSignal?.removeEventListener("abort", onClientGone);
      return { ok: true, kind: "json", target, parsed, upstreamMs: elapsed(), apiKeyHash };
    } catch (err) {
      return fail(timedOut ? timeout() : malformedFailure(err instanceof MalformedUpstreamError ? err.message : `malformed upstream response: ${errorMessage(err)}`));
    }
  }

  if (!res.body) return fail(malformedFailure("the upstream stream has no body"));
  const iterator = adapter.parseStream(res.body, target, req)[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    probe.upstreamFirst();
    if (first.done) return fail(streamFailure("the upstream stream ended without any output", "empty_stream"));
    if (first.value.type === "error") {
      void iterator.return?.();
      return fail(streamFailure(first.value.message, first.value.errorType));
    }
    clearTimeout(timer);
    const deadlineAt = timeouts?.totalChosen ? started + bounds.totalMs : null;
    return { ok: true, kind: "stream", target, first: first.value, iterator, abort, upstreamMs: elapsed(), apiKeyHash, interChunkMs: bounds.interChunkMs, deadlineAt };
  } catch (err) {
    return fail(timedOut ? timeout() : networkFailure(`upstream stream failed: ${errorMessage(err)}`));
  }
}

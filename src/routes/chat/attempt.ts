/**
 * One upstream attempt: credential -> adapter request -> fetch with a per-attempt timeout ->
 * parsed answer, or a classified failure (src/routing/failover.ts). A streamed attempt succeeds
 * once its first event arrived; until then it can still fail over.
 */
import type { Env } from "../../env";
import type { ChatRequest, ParsedCompletion, StreamEvent, UpstreamTarget } from "../../providers/types";
import { adapterFor } from "../../providers/registry";
import { MalformedUpstreamError } from "../../providers/errors";
import { ApiError } from "../../errors/api-error";
import type { Candidate } from "../../routing/candidates";
import { credentialHash, resolveCredential } from "../../routing/credentials";
import {
  classifyHttp,
  malformedFailure,
  networkFailure,
  streamFailure,
  timeoutFailure,
  unsupportedInput,
  type AttemptFailure,
} from "../../routing/failover";
import { traceUpstreamFirst, traceUpstreamStart } from "../../lib/debug-world";

/** Non-streamed answer, or time to the first event of a stream. Override: UPSTREAM_TIMEOUT_MS. */
const DEFAULT_TIMEOUT_MS = 120_000;

export const upstreamTimeoutMs = (env: Env): number => {
  const raw = (env as unknown as Record<string, unknown>).UPSTREAM_TIMEOUT_MS;
  const v = typeof raw === "string" ? Number(raw) : NaN;
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_TIMEOUT_MS;
};

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
 * client abort from a provider failure by the signal, and settles accordingly.
 */
export async function runAttempt(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, clientSignal?: AbortSignal): Promise<AttemptResult> {
  const timeoutMs = upstreamTimeoutMs(env);
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const onClientGone = () => abort.abort();
  clientSignal?.addEventListener("abort", onClientGone, { once: true });
  let apiKeyHash: string | undefined;
  const fail = (failure: AttemptFailure): AttemptResult => {
    clearTimeout(timer);
    clientSignal?.removeEventListener("abort", onClientGone);
    abort.abort();
    return { ok: false, failure, upstreamMs: elapsed(), ...(apiKeyHash ? { apiKeyHash } : {}) };
  };

  let target: UpstreamTarget;
  let upstream: Request;
  const adapter = adapterFor(cand.provider.wireFormat);
  try {
    const cred = await resolveCredential(env, cand.credential, cand.provider.baseUrl);
    apiKeyHash = await credentialHash(env, cred.apiKey);
    target = { provider: cand.provider, mapping: cand.mapping, model: cand.model, baseUrl: cred.baseUrl, apiKey: cred.apiKey, settings: cred.settings, credentialOwner: cred.owner };
    upstream = await adapter.buildRequest(req, target, { stream, signal: abort.signal });
  } catch (err) {
    // The adapter cannot carry this input (a 4xx it raised): another provider may; if none can,
    // the caller gets that 400 rather than a 502.
    if (err instanceof ApiError && err.status < 500) return fail(unsupportedInput(err.message));
    // A credential we cannot decrypt or a request we cannot build: not the provider's fault, but
    // another provider may still work.
    return fail({ ...networkFailure(`could not prepare the upstream request: ${errorMessage(err)}`), providerFault: false });
  }

  let res: Response;
  traceUpstreamStart(env);
  try {
    // Redirects are never followed: an organization's upstream URL passed the SSRF guard, the
    // place it redirects to did not (docs/security.md). A redirect is an upstream error.
    // Adapters build their Request with `upstreamInit` (one Request, not a copy per fetch); one
    // that did not (a signer that rebuilt it) is copied with redirects off.
    res = await fetch(upstream.redirect === "manual" ? upstream : new Request(upstream, { redirect: "manual" }));
  } catch (err) {
    return fail(timedOut ? timeoutFailure(timeoutMs) : networkFailure(`network error: ${errorMessage(err)}`));
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
    return fail(classifyHttp(res.status, cand.credential.source, redactCredential(info.message, target.apiKey), info.type));
  }

  if (!stream) {
    try {
      const body: unknown = await res.json();
      traceUpstreamFirst(env);
      const parsed = adapter.parseResponse(body, target);
      clearTimeout(timer);
      clientSignal?.removeEventListener("abort", onClientGone);
      return { ok: true, kind: "json", target, parsed, upstreamMs: elapsed(), apiKeyHash };
    } catch (err) {
      return fail(timedOut ? timeoutFailure(timeoutMs) : malformedFailure(err instanceof MalformedUpstreamError ? err.message : `malformed upstream response: ${errorMessage(err)}`));
    }
  }

  if (!res.body) return fail(malformedFailure("the upstream stream has no body"));
  const iterator = adapter.parseStream(res.body, target)[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    traceUpstreamFirst(env);
    if (first.done) return fail(streamFailure("the upstream stream ended without any output", "empty_stream"));
    if (first.value.type === "error") {
      void iterator.return?.();
      return fail(streamFailure(first.value.message, first.value.errorType));
    }
    clearTimeout(timer);
    return { ok: true, kind: "stream", target, first: first.value, iterator, abort, upstreamMs: elapsed(), apiKeyHash };
  } catch (err) {
    return fail(timedOut ? timeoutFailure(timeoutMs) : networkFailure(`upstream stream failed: ${errorMessage(err)}`));
  }
}

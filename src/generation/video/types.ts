/** Video generation wire formats (asynchronous jobs). */
import type { UpstreamCredential } from "../credentials";

export type VideoStatus = "queued" | "in_progress" | "completed" | "failed";

export interface VideoJob {
  upstreamId: string;
  status: VideoStatus;
  progress: number;
  error?: string;
}

export interface VideoCreateRequest {
  prompt: string;
  externalModel: string;
  seconds: string;
  size: string;
}

type Call = { url: string; init: RequestInit };

export interface VideoAdapter {
  /** Clip durations the API accepts (strings, as OpenAI's `seconds`). */
  seconds: readonly string[];
  defaultSeconds: string;
  /** Used when the catalogue mapping lists it; else its first supported size. */
  defaultSize: string;
  create(req: VideoCreateRequest, cred: UpstreamCredential): Call;
  status(upstreamId: string, cred: UpstreamCredential): Call;
  /** `headers` carries the client's Range / If-Range. */
  content(upstreamId: string, cred: UpstreamCredential, headers: Record<string, string>): Call;
  parseJob(body: unknown): VideoJob;
}

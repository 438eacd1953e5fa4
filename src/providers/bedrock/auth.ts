/**
 * Bedrock credentials. In order:
 * 1. `target.apiKey` of the form `<ACCESS_KEY_ID>:<SECRET_ACCESS_KEY>[:<SESSION_TOKEN>]` -> SigV4 with it (BYOK).
 * 2. any other non-empty `target.apiKey` -> a Bedrock API key, sent as `Authorization: Bearer`.
 * 3. `AWS_BEDROCK_ACCESS_KEY_ID` + `AWS_BEDROCK_SECRET_ACCESS_KEY` (+ `AWS_BEDROCK_SESSION_TOKEN`) settings -> SigV4.
 * Region: `AWS_BEDROCK_REGION`, else the one in a `bedrock-runtime.<region>.amazonaws.com` base URL, else us-east-1.
 */
import { AwsV4Signer } from "aws4fetch";
import type { UpstreamCall, UpstreamTarget } from "../types";
import { upstreamPost } from "../types";

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const ACCESS_KEY_RE = /^(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{12,}$/;

export function bedrockRegion(target: UpstreamTarget): string {
  return target.settings.AWS_BEDROCK_REGION ?? /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com/.exec(target.baseUrl)?.[1] ?? "us-east-1";
}

export function bedrockCredentials(target: UpstreamTarget): { kind: "sigv4"; creds: SigV4Credentials } | { kind: "bearer"; token: string } {
  const key = target.apiKey.trim();
  const [id, secret, session] = key.split(":");
  if (id && secret && ACCESS_KEY_RE.test(id)) {
    return { kind: "sigv4", creds: { accessKeyId: id, secretAccessKey: secret, ...(session ? { sessionToken: session } : {}) } };
  }
  if (key) return { kind: "bearer", token: key };
  const accessKeyId = target.settings.AWS_BEDROCK_ACCESS_KEY_ID;
  const secretAccessKey = target.settings.AWS_BEDROCK_SECRET_ACCESS_KEY;
  if (accessKeyId && secretAccessKey) {
    const sessionToken = target.settings.AWS_BEDROCK_SESSION_TOKEN;
    return { kind: "sigv4", creds: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
  }
  return { kind: "bearer", token: "" };
}

/**
 * A POST to Bedrock with its credentials. SigV4 signs the body's bytes, hence a string body; the
 * signer runs on the call's parts (aws4fetch's AwsClient would build a Request, clone it to read
 * the body, and build another one).
 */
export async function authorizedBedrockPost(url: string, headers: Record<string, string>, body: string, target: UpstreamTarget, signal?: AbortSignal): Promise<UpstreamCall> {
  const auth = bedrockCredentials(target);
  if (auth.kind === "bearer") return upstreamPost(url, { ...headers, authorization: `Bearer ${auth.token}` }, body, signal);
  const signed = await new AwsV4Signer({ method: "POST", url, headers, body, ...auth.creds, service: "bedrock", region: bedrockRegion(target) }).sign();
  return upstreamPost(url, signed.headers, body, signal);
}

/**
 * `POST /v1/videos` (OpenAI Videos API shape), `GET /v1/videos/{id}`, and the content proxy
 * `GET /v1/videos/logs/{log_id}/content` (spec 4.1): a key of the video's organization, or a
 * signed `?token=` (the `content_url` of the job) for players that cannot send headers.
 */
import { Hono, type Context, type MiddlewareHandler } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { gatewayOrigin, publicOrigin } from "../env";
import { checkKey, presentedKey, requireGatewayKey, authenticateGatewayKey } from "../auth/gateway-key";
import { startRate } from "../rate-limits/admission";
import { badRequest, unauthorized } from "../errors/api-error";
import { parseOrThrow, validate } from "../errors/validation";
import { gatewayRequest } from "./middleware/gateway-request";
import { createVideo, getVideo, streamVideoContent } from "../generation/videos";
import { verifyPlaybackToken } from "../generation/video/playback-token";
import { VIDEO_CONTENT_PATH, videoContentOrigin } from "../generation/video/content-safety";
import { notFoundHandler } from "../errors/on-error";

const videoBody = z.object({
  prompt: z.string().min(1).max(32_000),
  model: z.string().min(1).max(200).optional(),
  seconds: z.union([z.string().regex(/^\d{1,3}$/), z.number().int().min(1).max(600)]).optional(),
  size: z.string().regex(/^\d{2,5}x\d{2,5}$/, "expected WIDTHxHEIGHT, e.g. 1280x720").optional(),
});
const idParam = z.object({ id: z.string().min(1).max(100) });
const contentParams = z.object({ log_id: z.string().min(1).max(100) });
const contentQuery = z.object({ token: z.string().min(1).max(200).optional() });

export const videoRoutes = new Hono<AppEnv>();

/**
 * The body as JSON, or as the multipart form the official `openai` SDK's `videos.create` sends
 * (every field a string part). `input_reference` (an image guiding the video) is not supported.
 */
async function readVideoBody(c: Context<AppEnv>): Promise<z.infer<typeof videoBody>> {
  let raw: unknown;
  if ((c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data")) {
    let form: Record<string, string | File>;
    try {
      form = await c.req.parseBody();
    } catch {
      throw badRequest("The multipart form could not be parsed.", null, "invalid_multipart");
    }
    if (form.input_reference !== undefined) throw badRequest("'input_reference' is not supported by this gateway.", "input_reference", "unsupported_parameter");
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) if (typeof v === "string") fields[k] = v;
    raw = fields;
  } else {
    try {
      raw = await c.req.json();
    } catch {
      throw badRequest("The request body is not valid JSON.", null, "invalid_json");
    }
  }
  return parseOrThrow(videoBody, raw);
}

videoRoutes.post("/", requireGatewayKey({ spend: true }), async (c) => {
  const body = await readVideoBody(c);
  const view = await createVideo({
    ...gatewayRequest(c),
    body,
    origin: gatewayOrigin(c.env, c.req.raw),
  });
  return c.json(view);
});

/**
 * When `VIDEO_CONTENT_ORIGIN` is set, a request to that host gets the content route and nothing
 * else (no dashboard, no API): a file opened there runs on an origin that holds no session.
 */
export const videoContentOriginOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const media = videoContentOrigin(c.env);
  // Set to the gateway's own origin by mistake, it restricts nothing (and breaks nothing).
  if (media === null || media === publicOrigin(c.env) || new URL(c.req.url).origin !== media) return next();
  if ((c.req.method === "GET" || c.req.method === "HEAD") && VIDEO_CONTENT_PATH.test(c.req.path)) return next();
  return notFoundHandler(c);
};

/** Every answer of the content route, errors included, is neither sniffed nor rendered. */
videoRoutes.use("/logs/:log_id/content", async (c, next) => {
  await next();
  const set = (h: Headers) => {
    h.set("x-content-type-options", "nosniff");
    if (!h.has("content-security-policy")) h.set("content-security-policy", "default-src 'none'; sandbox");
  };
  try {
    set(c.res.headers);
  } catch {
    const res = new Response(c.res.body, c.res);
    set(res.headers);
    c.res = res;
  }
});

videoRoutes.get("/logs/:log_id/content", validate("param", contentParams), validate("query", contentQuery), async (c) => {
  const { log_id: logId } = c.req.valid("param");
  const { token } = c.req.valid("query");
  const headers = { range: c.req.header("range"), ifRange: c.req.header("if-range") };
  if (token !== undefined) {
    if (!(await verifyPlaybackToken(c.env, logId, token))) throw unauthorized("Invalid or expired playback token.", "invalid_token");
    return streamVideoContent(c.env, logId, null, headers);
  }
  const ctx = await checkKey(c.env, startRate(c, await authenticateGatewayKey(c.env, presentedKey(c.req.raw.headers), Date.now(), { sessions: true })));
  return streamVideoContent(c.env, logId, ctx.organization.id, headers);
});

videoRoutes.get("/:id", requireGatewayKey({ spend: false }), validate("param", idParam), async (c) => {
  const view = await getVideo(c.env, c.get("keyAuth"), c.req.valid("param").id, gatewayOrigin(c.env, c.req.raw), (p) => c.executionCtx.waitUntil(p));
  return c.json(view);
});

/** `POST /v1/images/generations` (OpenAI Images API shape). */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { requireGatewayKey } from "../auth/gateway-key";
import { validate } from "../errors/validation";
import { gatewayRequest } from "./middleware/gateway-request";
import { generateImages, imageSizeSchema, MAX_IMAGES } from "../generation/images";

const imageBody = z.object({
  prompt: z.string().min(1).max(32_000),
  model: z.string().min(1).max(200).optional(),
  size: imageSizeSchema.optional(),
  n: z.number().int().min(1).max(MAX_IMAGES).optional(),
  aspect_ratio: z.string().max(10).optional(),
  response_format: z.enum(["b64_json", "url"]).optional(),
  user: z.string().max(256).optional(),
});

export const imageRoutes = new Hono<AppEnv>();

imageRoutes.post("/generations", requireGatewayKey({ spend: true }), validate("json", imageBody), async (c) => {
  const body = c.req.valid("json");
  const result = await generateImages({
    ...gatewayRequest(c),
    noFallback: c.req.header("x-no-fallback") === "true",
    body,
  });
  const { mimeTypes: _mime, text: _text, ...response } = result;
  return c.json(response);
});

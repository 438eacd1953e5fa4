/** `POST /v1/embeddings` (OpenAI Embeddings API). The work is in src/embeddings/execute.ts. */
import { Hono } from "hono";
import type { AppEnv } from "../app-types";
import { requireGatewayKey } from "../auth/gateway-key";
import { validate } from "../errors/validation";
import { executeEmbeddings } from "../embeddings/execute";
import { embeddingsRequestSchema } from "../embeddings/schema";
import { gatewayRequest } from "./middleware/gateway-request";

export const embeddingRoutes = new Hono<AppEnv>();

embeddingRoutes.post("/", requireGatewayKey({ spend: true }), validate("json", embeddingsRequestSchema), async (c) => {
  const body = await executeEmbeddings(gatewayRequest(c), c.req.valid("json"));
  return c.json(body);
});

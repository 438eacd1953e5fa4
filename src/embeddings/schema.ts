/** `POST /v1/embeddings` body (OpenAI Embeddings API). */
import * as z from "zod";

const MAX_INPUTS = 2048;

export const embeddingsRequestSchema = z.object({
  model: z.string().min(1, "model is required").max(512),
  input: z.union([
    z.string().min(1, "must not be empty"),
    z.array(z.string().min(1, "must not be empty")).min(1).max(MAX_INPUTS),
    z.array(z.number().int().nonnegative()).min(1),
    z.array(z.array(z.number().int().nonnegative()).min(1)).min(1).max(MAX_INPUTS),
  ]),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().positive().max(65_536).optional(),
  user: z.string().max(256).optional(),
});

export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;

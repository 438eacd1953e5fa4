/**
 * Generation tools: chat, generate-image, generate-nano-banana. They run the same gateway paths
 * as the HTTP API with the connected key's context, so spend limits, IAM, logging, settlement and
 * app attribution (x-source / User-Agent of the MCP request) all apply.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { gatewayRequestOf, type McpToolContext } from "../context";
import { generateImages, type GenerationDeps } from "../../generation/images";
import { generateNanoBanana } from "../../generation/nano-banana";
import { generateImageInput, generateImageOutput, generateNanoBananaInput, nanoBananaOutput } from "../schemas";
import { DEFAULT_IMAGE_MODEL } from "./catalog";
import { registerChatTool } from "./chat";
import { generationFailure } from "./result";
import { IMAGE_DEFAULTS, TOOL_TEXT } from "./descriptions";

const GENERATES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;
export const DEFAULT_IMAGE_SIZE = IMAGE_DEFAULTS.size;

const deps = (ctx: McpToolContext): GenerationDeps => ({
  ...gatewayRequestOf(ctx),
  noFallback: ctx.headers.get("x-no-fallback") === "true",
});

export function registerGenerationTools(server: McpServer, ctx: McpToolContext): void {
  registerChatTool(server, ctx);

  server.registerTool(
    "generate-image",
    {
      ...TOOL_TEXT["generate-image"],
      inputSchema: generateImageInput,
      outputSchema: generateImageOutput,
      annotations: GENERATES,
    },
    async (args) => {
      try {
        const result = await generateImages({
          ...deps(ctx),
          body: {
            prompt: args.prompt,
            model: args.model ?? DEFAULT_IMAGE_MODEL,
            size: args.size ?? DEFAULT_IMAGE_SIZE,
            n: args.n ?? 1,
            response_format: "b64_json",
          },
        });
        const content: CallToolResult["content"] = [];
        const images = result.data.map((d, index) => {
          const mimeType = result.mimeTypes[index] ?? "image/png";
          if (d.b64_json) content.push({ type: "image", data: d.b64_json, mimeType });
          else if (d.url) content.push({ type: "text", text: `Image ${index + 1}: ${d.url}` });
          return { index, mimeType, url: d.url ?? null, revised_prompt: d.revised_prompt ?? null };
        });
        const structured = {
          model: result.model,
          images,
          cost_usd: result.usage?.cost ?? null,
          request_id: result.metadata.request_id ?? null,
        };
        content.push({ type: "text", text: JSON.stringify(structured, null, 2) });
        return { content, structuredContent: structured };
      } catch (err) {
        return generationFailure(err);
      }
    },
  );

  server.registerTool(
    "generate-nano-banana",
    {
      ...TOOL_TEXT["generate-nano-banana"],
      inputSchema: generateNanoBananaInput,
      outputSchema: nanoBananaOutput,
      annotations: GENERATES,
    },
    async (args) => {
      try {
        const r = await generateNanoBanana({ ...deps(ctx), prompt: args.prompt, filename: args.filename, aspect_ratio: args.aspect_ratio });
        const usage = r.usage as { cost?: unknown } | undefined;
        const structured = {
          model: r.model,
          mimeType: r.mimeType,
          saved: r.saved !== null,
          path: r.saved ? r.saved.key : null,
          text: r.text ?? null,
          cost_usd: typeof usage?.cost === "number" ? usage.cost : null,
          request_id: r.metadata.request_id ?? null,
        };
        const note = r.saved ? `Saved to ${r.saved.key} (${r.saved.bytes} bytes).` : "Returned inline only (saving is not enabled on this server).";
        return {
          content: [
            { type: "image", data: r.b64, mimeType: r.mimeType },
            { type: "text", text: `${note}\n${JSON.stringify(structured, null, 2)}` },
          ],
          structuredContent: structured,
        };
      } catch (err) {
        return generationFailure(err);
      }
    },
  );
}

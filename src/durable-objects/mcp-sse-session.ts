import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** Session of the legacy HTTP+SSE MCP transport (issue: MCP). */
export class McpSseSession extends DurableObject<Env> {}

/**
 * A front door's JSON body: parsed once, the 400 envelope when it is not JSON, and Hono's copy of
 * its text let go at once.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../app-types";
import { badRequest } from "../../errors/api-error";

/**
 * Hono keeps the text it parsed (`bodyCache`) for as long as the request's context lives: a coding
 * agent's body is a few hundred kilobytes of young heap that every garbage collection during the
 * request's upstream call would copy, and no one reads it again once parsed.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw badRequest("The request body is not valid JSON.", null, "invalid_json");
  } finally {
    c.req.bodyCache = {};
  }
}

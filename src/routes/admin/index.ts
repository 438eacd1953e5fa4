/**
 * Operator API (contract section 3), guarded by ADMIN_TOKEN. Without ADMIN_TOKEN the whole
 * surface answers 404, as if it did not exist.
 */
import { Hono, type MiddlewareHandler } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { PLANS } from "../../db/schema";
import { notFoundHandler } from "../../errors/on-error";
import { badRequest, unauthorized } from "../../errors/api-error";
import { closedUntil, FINAL_GRACE_MS, hourStartOf, rebuildHour, recordsBoundary } from "../../usage/aggregate";
import { firstRebuildableHour } from "../../usage/log-consumer";
import { validate, validateBody } from "../../errors/validation";
import { extractBearer } from "../../auth/gateway-key";
import { timingSafeEqual } from "../../lib/crypto";
import { isDecimalString, parseUsd } from "../../billing/money";
import { bootstrapOrganization } from "../../organizations/bootstrap";
import { createMasterKey, listMasterKeys, masterKeyCreateBody } from "../../organizations/master-keys";
import { loadOrganization, rateCeilingsBody, setRateCeilings } from "../../actions/organization";
import { addCreditEntry, creditEntryBody, creditLedgerView } from "../../billing/credit-ledger";

const requireAdminToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) return notFoundHandler(c);
  const presented = extractBearer(c);
  if (!presented || !timingSafeEqual(presented, expected)) {
    throw unauthorized("Invalid admin token: send 'Authorization: Bearer <ADMIN_TOKEN>'.", "invalid_admin_token");
  }
  await next();
};

/** Starting balance: decimal USD, small enough to stay an exact JS number of pico-dollars. */
const MAX_START_CREDITS = parseUsd("9000");
const credits = z
  .string()
  .refine((v) => isDecimalString(v) && !v.startsWith("-"), "must be a non-negative decimal string, e.g. \"25.00\"")
  .refine((v) => !isDecimalString(v) || parseUsd(v) <= MAX_START_CREDITS, "must be at most 9000 USD");

// Strict like every master body: a misspelt field is a 400 naming it, never silently dropped.
export const bootstrapBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  plan: z.enum(PLANS),
  owner: z.strictObject({
    email: z.email().max(320),
    name: z.string().trim().min(1).max(200),
    password: z.string().min(12, "must be at least 12 characters").max(1024),
  }),
  /** Extension for demos and tests: starting credit balance in USD. */
  credits: credits.optional(),
});

export const adminRoutes = new Hono<AppEnv>();
adminRoutes.use("*", requireAdminToken);

adminRoutes.post("/organizations", validateBody(bootstrapBody), async (c) => {
  const body = c.req.valid("json");
  const result = await bootstrapOrganization(c.env, {
    name: body.name,
    plan: body.plan,
    owner: body.owner,
    creditsPico: body.credits === undefined ? 0 : Number(parseUsd(body.credits)),
  });
  return c.json(result, 201);
});

// ---------- master keys of any organization (the operator's way back in when every key leaked) ----------

const orgParam = z.object({ id: z.string().min(1).max(64) });

adminRoutes.post("/organizations/:id/master-keys", validate("param", orgParam), validateBody(masterKeyCreateBody), async (c) => {
  const { id } = c.req.valid("param");
  await loadOrganization(c.env, id);
  return c.json({ masterKey: await createMasterKey(c.env, id, c.req.valid("json").description, { via: "admin", id: null }) }, 201);
});

adminRoutes.get("/organizations/:id/master-keys", validate("param", orgParam), async (c) => {
  const { id } = c.req.valid("param");
  await loadOrganization(c.env, id);
  return c.json({ masterKeys: await listMasterKeys(c.env, id) });
});

// ---------- credits after bootstrap: top-ups and corrections (docs/api.md) ----------

adminRoutes.post("/organizations/:id/credits", validate("param", orgParam), validateBody(creditEntryBody), async (c) => {
  const { entry, created } = await addCreditEntry(c.env, c.req.valid("param").id, c.req.valid("json"));
  const { balance } = await creditLedgerView(c.env, c.req.valid("param").id, 0);
  return c.json({ entry, balance, created }, created ? 201 : 200);
});

adminRoutes.get("/organizations/:id/credits", validate("param", orgParam), async (c) => c.json(await creditLedgerView(c.env, c.req.valid("param").id)));
// ---------- rate limits above the plan's: only the operator grants them (docs/admission.md) ----------

adminRoutes.patch("/organizations/:id/rate-limits", validate("param", orgParam), validateBody(rateCeilingsBody), async (c) =>
  c.json({ organization: await setRateCeilings(c.env, c.req.valid("param").id, c.req.valid("json")) }),
);

/** `?hour=`: an ISO 8601 time; the hour that contains it is rebuilt. */
const rebuildQuery = z.object({
  hour: z
    .string({ error: "'hour' is required: an ISO 8601 time, e.g. 2026-01-31T13:00:00Z" })
    .refine((v) => /^\d{4}-\d{2}-\d{2}/.test(v) && Number.isFinite(Date.parse(v)), "'hour' must be an ISO 8601 time, e.g. 2026-01-31T13:00:00Z")
    .transform((v) => hourStartOf(Date.parse(v))),
});

/** Recomputes one closed hour's aggregates from the raw records in R2 (src/usage/aggregate.ts). */
adminRoutes.post("/usage/rebuild", validate("query", rebuildQuery), async (c) => {
  const { hour } = c.req.valid("query");
  const now = Date.now();
  if (hour >= closedUntil(now)) {
    throw badRequest(`The hour ${new Date(hour).toISOString()} is not closed yet (hours close ${FINAL_GRACE_MS / 60_000} minutes after they end); records may still arrive.`, "hour", "hour_not_closed");
  }
  // Hours whose records are not all in R2 (aggregated by the path before the queue, or past R2's
  // retention) would be replaced by the part that is there.
  const first = firstRebuildableHour(c.env, now, await recordsBoundary(c.env.DB));
  if (first === null) {
    throw badRequest("No hour can be rebuilt yet: the upgrade's copy of the request_logs rows of the path before the queue to R2 has not run (the every-minute cron does it first). Try again in a minute.", "hour", "hour_not_rebuildable");
  }
  if (hour < first) {
    throw badRequest(`The hour ${new Date(hour).toISOString()} cannot be rebuilt: its records are not all in R2 (aggregated before the upgrade to the LOGS queue, or past REQUEST_LOG_RETENTION_DAYS). The first hour that can be rebuilt is ${new Date(first).toISOString()}.`, "hour", "hour_not_rebuildable");
  }
  return c.json(await rebuildHour(c.env, hour, now));
});

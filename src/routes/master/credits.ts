/** Master API: the organization's credit balance and ledger (top-ups and corrections). */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate } from "../../errors/validation";
import { creditLedgerView } from "../../billing/credit-ledger";

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });

export const masterCreditRoutes = new Hono<AppEnv>();

masterCreditRoutes.get("/", validate("query", listQuery), async (c) =>
  c.json(await creditLedgerView(c.env, c.get("master").organizationId, c.req.valid("query").limit)),
);

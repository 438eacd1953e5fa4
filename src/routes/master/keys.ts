/**
 * Master API: gateway keys of the master key's organization (contract section 4). TTL and
 * rotation are dashboard-only (spec 4.2); everything else goes through the shared services in
 * src/keys/ so the master and dashboard APIs behave identically.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { validate, validateBody } from "../../errors/validation";
import { ruleBodySchema } from "../../iam/rule-body";
import { publicKey } from "../../keys/create";
import { issueKey } from "../../keys/issue";
import { limitFields } from "../../keys/limits";
import { keyRateFields } from "../../rate-limits/plans";
import { getKeyRow } from "../../keys/lookup";
import { updateKey } from "../../keys/update";
import { deleteKey } from "../../keys/delete";
import { keyDetail } from "../../keys/view";
import { listKeysWithSpend } from "../../actions/keys";

const createBody = z.object({
  projectId: z.string().min(1).max(64),
  description: z.string().trim().max(256).default(""),
  memberId: z.string().min(1).max(64).optional(),
  kind: z.enum(["standard", "coding-plan"]).optional(),
  ...limitFields,
  ...keyRateFields,
  iamRules: z.array(ruleBodySchema).max(50).optional(),
});

const patchBody = z
  .object({
    description: z.string().trim().max(256).optional(),
    status: z.enum(["active", "inactive"]).optional(),
    ...limitFields,
    ...keyRateFields,
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update" });

/** Key TTLs are a dashboard setting (spec): the master API says so instead of dropping them. */
const TTL_HINT = "Key expiry (TTL) is set in the dashboard, not through the master API.";
const TTL_HINTS = { expiresIn: TTL_HINT, expiresAt: TTL_HINT };

const idParam = z.object({ id: z.string().min(1).max(64) });
const listQuery = z.object({ projectId: z.string().min(1).max(64).optional() });

export const masterKeyRoutes = new Hono<AppEnv>();

masterKeyRoutes.post("/", validateBody(createBody, TTL_HINTS), async (c) => {
  const body = c.req.valid("json");
  const { row, token } = await issueKey(c.env, { ...body, organizationId: c.get("master").organizationId });
  return c.json({ apiKey: { ...publicKey(row), token } }, 201);
});

masterKeyRoutes.get("/", validate("query", listQuery), async (c) => {
  const keys = await listKeysWithSpend(c.env, c.get("master").organizationId, c.req.valid("query"));
  return c.json({ apiKeys: keys.map((k) => k.apiKey) });
});

masterKeyRoutes.get("/:id", validate("param", idParam), async (c) => {
  const row = await getKeyRow(getDb(c.env.DB), c.get("master").organizationId, c.req.valid("param").id);
  return c.json({ apiKey: await keyDetail(c.env, row) });
});

masterKeyRoutes.patch("/:id", validate("param", idParam), validateBody(patchBody, TTL_HINTS), async (c) => {
  const row = await getKeyRow(getDb(c.env.DB), c.get("master").organizationId, c.req.valid("param").id);
  const updated = await updateKey(c.env, row, c.req.valid("json"));
  return c.json({ apiKey: await keyDetail(c.env, updated) });
});

masterKeyRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const row = await getKeyRow(getDb(c.env.DB), c.get("master").organizationId, c.req.valid("param").id);
  await deleteKey(c.env, row);
  return c.json({ message: `API key '${row.id}' deleted` });
});

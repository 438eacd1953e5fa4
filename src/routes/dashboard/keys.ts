/**
 * Dashboard key management (contract section 5): the only place with TTL and rotation.
 * Owners and admins manage every key of the organization; developers only keys they created
 * (anyone else's is 404), and not a status or limits an owner or admin set (403, src/keys/update.ts).
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import { isoInstant } from "../../lib/iso-instant";
import type { DashboardEnv } from "./types";
import type { SessionInfo } from "../../auth/session";
import { getDb } from "../../db/client";
import { validate, validateBody } from "../../errors/validation";
import { publicKey, type KeyActor, type KeyRow } from "../../keys/create";
import { issueKey } from "../../keys/issue";
import { limitFields } from "../../keys/limits";
import { keyRateFields } from "../../rate-limits/plans";
import { getKeyRow } from "../../keys/lookup";
import { updateKey } from "../../keys/update";
import { rollKey } from "../../keys/roll";
import { deleteKey } from "../../keys/delete";
import { keyDetail } from "../../keys/view";
import { listKeysWithSpend } from "../../actions/keys";
import { ruleBodySchema } from "../../iam/rule-body";

const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
/** Longest TTL accepted at creation: 10 years. */
const MAX_TTL_MS = 3650 * UNIT_MS.day;

const expiresIn = z
  .object({ value: z.number().int().min(1), unit: z.enum(["minute", "hour", "day"]) })
  .refine((e) => e.value * UNIT_MS[e.unit] <= MAX_TTL_MS, { message: "at most 10 years" });

const isoDate = isoInstant("expiresAt");

/** Dashboard only: a key's own budget alert threshold; null returns to the organization's. */
const alertThresholdPercent = z.number().int().min(50).max(100).nullable().optional();

const createBody = z
  .object({
    projectId: z.string().min(1).max(64),
    description: z.string().trim().max(256).default(""),
    kind: z.enum(["standard", "coding-plan"]).optional(),
    expiresIn: expiresIn.optional(),
    expiresAt: isoDate.nullable().optional(),
    alertThresholdPercent,
    ...limitFields,
    ...keyRateFields,
    iamRules: z.array(ruleBodySchema).max(50).optional(),
  })
  .refine((b) => !(b.expiresIn && b.expiresAt != null), { message: "give either expiresIn or expiresAt", path: ["expiresAt"] });

const patchBody = z
  .object({
    description: z.string().trim().max(256).optional(),
    status: z.enum(["active", "inactive"]).optional(),
    expiresAt: isoDate.nullable().optional(),
    alertThresholdPercent,
    ...limitFields,
    ...keyRateFields,
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update" });

const idParam = z.object({ id: z.string().min(1).max(64) });
const listQuery = z.object({ projectId: z.string().min(1).max(64).optional() });

/** Owners and admins manage keys as managers; a developer's changes are limited (src/keys/update.ts). */
const actorOf = (s: SessionInfo): KeyActor => (s.role === "developer" ? "developer" : "manager");

/** Developers see and manage only keys they created. */
export const ownerFilter = (s: SessionInfo): { createdBy?: string } => (s.role === "developer" ? { createdBy: s.memberId } : {});

function loadKey(c: Context<DashboardEnv>, id: string): Promise<KeyRow> {
  const s = c.get("session");
  return getKeyRow(getDb(c.env.DB), s.organizationId, id, ownerFilter(s));
}

export const dashboardKeyRoutes = new Hono<DashboardEnv>();

dashboardKeyRoutes.get("/", validate("query", listQuery), async (c) => {
  const s = c.get("session");
  const keys = await listKeysWithSpend(c.env, s.organizationId, { ...c.req.valid("query"), ...ownerFilter(s) });
  return c.json({ apiKeys: keys.map((k) => k.apiKey) });
});

dashboardKeyRoutes.post("/", validateBody(createBody), async (c) => {
  const s = c.get("session");
  const { expiresIn: ttl, expiresAt, ...body } = c.req.valid("json");
  const now = Date.now();
  const { row, token } = await issueKey(
    c.env,
    {
      ...body,
      organizationId: s.organizationId,
      memberId: s.memberId,
      actor: actorOf(s),
      expiresAt: ttl ? now + ttl.value * UNIT_MS[ttl.unit] : (expiresAt ?? null),
    },
    now,
  );
  return c.json({ apiKey: { ...publicKey(row), token } }, 201);
});

dashboardKeyRoutes.get("/:id", validate("param", idParam), async (c) => {
  const row = await loadKey(c, c.req.valid("param").id);
  return c.json({ apiKey: await keyDetail(c.env, row) });
});

dashboardKeyRoutes.patch("/:id", validate("param", idParam), validateBody(patchBody), async (c) => {
  const row = await loadKey(c, c.req.valid("param").id);
  const updated = await updateKey(c.env, row, c.req.valid("json"), actorOf(c.get("session")));
  return c.json({ apiKey: await keyDetail(c.env, updated) });
});

dashboardKeyRoutes.post("/:id/roll", validate("param", idParam), async (c) => {
  const row = await loadKey(c, c.req.valid("param").id);
  const rolled = await rollKey(c.env, row);
  return c.json({ apiKey: { ...publicKey(rolled.row), token: rolled.token } });
});

dashboardKeyRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const row = await loadKey(c, c.req.valid("param").id);
  await deleteKey(c.env, row);
  return c.json({ message: `API key '${row.id}' deleted` });
});

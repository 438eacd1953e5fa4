/**
 * An organization's OpenID Connect sign-in (contract section 8): `PUT /v1/master/sso` and the
 * dashboard's owner-only form save it here. The client secret is sealed with AES-GCM under
 * KEY_HASH_SECRET (`encryptSecret`) and never returned: the view shows its last four characters.
 * Saving checks the issuer's discovery document, so a typo is a 400 now, not a failed sign-in later.
 */
import { and, asc, eq, ne, sql } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { members, organizationSso, sessions } from "../db/schema";
import { badRequest } from "../errors/api-error";
import { encryptSecret, requireHashSecret, tokenHint } from "../lib/crypto";
import { discoverIssuer } from "./issuer";


const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const ssoConfigBody = z.object({
  issuer: z.string().trim().url().max(500),
  clientId: z.string().trim().min(1).max(500),
  /** Required the first time; left out later, the stored secret stays. */
  clientSecret: z.string().min(1).max(2000).optional(),
  allowedDomains: z
    .array(z.string().trim().toLowerCase().regex(DOMAIN, "must be an e-mail domain such as example.com"))
    .min(1)
    .max(50),
  defaultRole: z.enum(["developer", "admin"]),
  required: z.boolean().optional(),
  /** The owner who may still sign in with a password when `required`; default: the oldest owner. */
  breakGlassMemberId: z.string().min(1).max(64).optional(),
});
export type SsoConfigInput = z.infer<typeof ssoConfigBody>;

export type SsoRow = typeof organizationSso.$inferSelect;

/** The redirect URI to register at the identity provider (contract section 8). */
export const ssoRedirectUri = (origin: string): string => `${origin}/dashboard/sso/callback`;

export function ssoView(row: SsoRow, origin: string) {
  return {
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecretHint: row.clientSecretHint,
    allowedDomains: row.allowedDomains,
    defaultRole: row.defaultRole,
    required: row.required,
    breakGlassMemberId: row.breakGlassMemberId,
    redirectUri: ssoRedirectUri(origin),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

export const readSsoConfig = (env: Env, organizationId: string): Promise<SsoRow | undefined> =>
  getDb(env.DB).select().from(organizationSso).where(eq(organizationSso.organizationId, organizationId)).get();

/** The owner who stays able to sign in with a password: the one named, else the oldest owner. */
async function breakGlassOwner(env: Env, organizationId: string, named: string | undefined): Promise<string> {
  const owners = await getDb(env.DB)
    .select({ id: members.id })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.role, "owner")))
    .orderBy(asc(members.createdAt), asc(members.id));
  if (named === undefined) {
    const first = owners[0];
    if (!first) throw badRequest("SSO cannot be required: the organization has no owner to keep password sign-in.", "required");
    return first.id;
  }
  if (!owners.some((o) => o.id === named)) throw badRequest("breakGlassMemberId must be an owner of this organization.", "breakGlassMemberId");
  return named;
}

export async function saveSsoConfig(env: Env, organizationId: string, input: SsoConfigInput, now = Date.now()): Promise<SsoRow> {
  const existing = await readSsoConfig(env, organizationId);
  if (!input.clientSecret && !existing) throw badRequest("clientSecret is required when SSO is first configured.", "clientSecret");
  // Kept exactly as typed: the ID token's `iss` must equal it character for character.
  const issuer = input.issuer;
  await discoverIssuer(env, issuer).catch((err: unknown) => {
    throw badRequest(`The issuer's OpenID configuration could not be read: ${err instanceof Error ? err.message : "unknown error"}.`, "issuer", "invalid_issuer");
  });
  const required = input.required ?? false;
  const breakGlassMemberId = required ? await breakGlassOwner(env, organizationId, input.breakGlassMemberId) : null;
  const secret = input.clientSecret
    ? { clientSecretEncrypted: await encryptSecret(requireHashSecret(env), input.clientSecret), clientSecretHint: tokenHint(input.clientSecret) }
    : null;
  const values = {
    issuer,
    clientId: input.clientId,
    allowedDomains: [...new Set(input.allowedDomains)],
    defaultRole: input.defaultRole,
    required,
    breakGlassMemberId,
    updatedAt: now,
  };
  const db = getDb(env.DB);
  if (existing) {
    await db.update(organizationSso).set({ ...values, ...(secret ?? {}) }).where(eq(organizationSso.organizationId, organizationId));
  } else if (secret) {
    await db.insert(organizationSso).values({ organizationId, ...values, ...secret, createdAt: now });
  }
  // Requiring SSO ends the password sessions it now forbids, not only the next sign-ins.
  if (required && breakGlassMemberId) {
    await db
      .delete(sessions)
      .where(and(eq(sessions.organizationId, organizationId), eq(sessions.signInMethod, "password"), ne(sessions.memberId, breakGlassMemberId)));
  }
  const saved = await readSsoConfig(env, organizationId);
  if (!saved) throw new Error("SSO configuration not saved");
  return saved;
}

export async function deleteSsoConfig(env: Env, organizationId: string): Promise<boolean> {
  const gone = await getDb(env.DB).delete(organizationSso).where(eq(organizationSso.organizationId, organizationId)).returning({ id: organizationSso.organizationId });
  return gone.length > 0;
}

/** The organizations whose SSO allows the domain of `email`, for the sign-in page. */
export async function organizationsForEmail(env: Env, email: string): Promise<SsoRow[]> {
  const domain = email.trim().toLowerCase().split("@").at(-1) ?? "";
  if (!DOMAIN.test(domain)) return [];
  return getDb(env.DB)
    .select()
    .from(organizationSso)
    .where(sql`exists (select 1 from json_each(${organizationSso.allowedDomains}) where json_each.value = ${domain})`);
}

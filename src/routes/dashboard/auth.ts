/**
 * `POST /api/auth/sign-in` and `POST /api/auth/sign-out` (contract section 5). Attempts are
 * rate-limited per e-mail and per client IP; the session lives in D1, the cookie only holds a
 * random token.
 */
import { Hono, type Context } from "hono";
import { and, asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { DashboardEnv } from "./types";
import { getDb } from "../../db/client";
import { members, organizations, users } from "../../db/schema";
import { ApiError, unauthorized } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { verifyPassword } from "../../auth/password";
import { clearedSessionCookie, createSession, destroySession } from "../../auth/session";
import { assertSameOrigin } from "../../auth/csrf";
import { rateLimit } from "../../durable-objects/rate-limiter";
import { clientIpFromForwardedFor } from "../../iam/cidr";

const ATTEMPTS_PER_EMAIL = 10;
const ATTEMPTS_PER_IP = 50;
const WINDOW_MS = 15 * 60_000;

const signInBody = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
  organizationId: z.string().min(1).max(64).optional(),
});

/** A password hash to verify against when the user does not exist, so timing does not reveal it. */
let dummyHash: string | null = null;
async function fakeVerify(password: string): Promise<void> {
  dummyHash ??= `pbkdf2-sha256$100000$${btoa("switchboard-salt")}$${btoa("x".repeat(32))}`;
  await verifyPassword(password, dummyHash);
}

/** Cloudflare always sets `cf-connecting-ip` in production; locally fall back to X-Forwarded-For. */
function requestIp(c: Context): string | null {
  return c.req.header("cf-connecting-ip") ?? clientIpFromForwardedFor(c.req.header("x-forwarded-for"));
}

async function limitAttempts(c: Context<DashboardEnv>, email: string): Promise<void> {
  const ip = requestIp(c);
  const results = await Promise.all([
    rateLimit(c.env, `signin:email:${email}`, ATTEMPTS_PER_EMAIL, WINDOW_MS),
    ...(ip ? [rateLimit(c.env, `signin:ip:${ip}`, ATTEMPTS_PER_IP, WINDOW_MS)] : []),
  ]);
  const blocked = results.filter((r) => !r.allowed);
  if (blocked.length > 0) {
    const resetAt = Math.max(...blocked.map((r) => r.resetAt));
    const retryAfter = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
    throw new ApiError(429, "Too many sign-in attempts; try again later.", {
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      headers: { "retry-after": String(retryAfter) },
    });
  }
}

export const dashboardAuthRoutes = new Hono<DashboardEnv>();

dashboardAuthRoutes.post("/sign-in", validateBody(signInBody), async (c) => {
  assertSameOrigin(c);
  const body = c.req.valid("json");
  const email = body.email.toLowerCase();
  await limitAttempts(c, email);
  const db = getDb(c.env.DB);
  const user = await db.select().from(users).where(eq(users.email, email)).get();
  if (!user) {
    await fakeVerify(body.password);
    throw unauthorized("Invalid e-mail or password.", "invalid_credentials");
  }
  if (!(await verifyPassword(body.password, user.passwordHash))) throw unauthorized("Invalid e-mail or password.", "invalid_credentials");

  const conds = [eq(members.userId, user.id)];
  if (body.organizationId) conds.push(eq(members.organizationId, body.organizationId));
  const membership = await db
    .select({ memberId: members.id, role: members.role, organizationId: organizations.id, organizationName: organizations.name })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(and(...conds))
    .orderBy(asc(members.createdAt), asc(members.id))
    .get();
  if (!membership) throw unauthorized("This user is not a member of that organization.", "no_membership");

  const session = await createSession(c.env, { userId: user.id, organizationId: membership.organizationId, memberId: membership.memberId });
  c.header("set-cookie", session.cookie);
  c.header("cache-control", "no-store");
  return c.json({
    user: { id: user.id, email: user.email, name: user.name },
    organization: { id: membership.organizationId, name: membership.organizationName },
    member: { id: membership.memberId, role: membership.role },
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAt).toISOString(),
  });
});

dashboardAuthRoutes.post("/sign-out", async (c) => {
  assertSameOrigin(c);
  await destroySession(c.env, c.req.header("cookie"));
  c.header("set-cookie", clearedSessionCookie());
  return c.body(null, 204);
});

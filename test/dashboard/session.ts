/** Signing in to the dashboard session API in Worker tests: the cookie and the CSRF token. */
import { expect } from "vitest";
import { call, json } from "../helpers/fixtures";

export interface Session {
  cookie: string;
  csrf: string;
}

export async function signIn(email: string, password: string): Promise<Session> {
  const res = await call("/api/auth/sign-in", { method: "POST", ...json({ email, password }) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: (res.headers.get("set-cookie") ?? "").split(";")[0]!, csrf: body.csrfToken };
}

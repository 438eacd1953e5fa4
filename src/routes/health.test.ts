import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../../test/helpers/fixtures";
import { healthReport, type HealthBody } from "./health";
import type { Env } from "../env";
import pkg from "../../package.json";

describe("GET / (health)", () => {
  it("reports both checks connected with the package version", async () => {
    const res = await call("/");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      message: "OK",
      version: pkg.version,
      health: { status: "ok", redis: { connected: true }, database: { connected: true, sizeBytes: expect.any(Number), limitBytes: 10_000_000_000 } },
    });
  });

  it("answers at /health and /v1/health exactly as at /", async () => {
    const root = await (await call("/")).json();
    for (const path of ["/health", "/v1/health", "/health?skip=database"]) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      if (!path.includes("skip")) expect(await res.json()).toEqual(root);
    }
  });

  it("skips the checks named in ?skip and rejects unknown names", async () => {
    const one = (await (await call("/?skip=database")).json()) as HealthBody;
    expect(one.health).toEqual({ status: "ok", redis: { connected: true }, database: { connected: false, skipped: true } });
    const both = (await (await call("/?skip=redis,%20database")).json()) as HealthBody;
    expect(both.health.redis).toEqual({ connected: false, skipped: true });
    expect(both.health.database).toEqual({ connected: false, skipped: true });

    const bad = await call("/?skip=redis,cache");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string; message: string } }).error).toMatchObject({ param: "skip", message: expect.stringContaining("cache") });
  });

  it("answers 503 with the same shape when the database fails, without leaking details", async () => {
    const brokenDb = {
      prepare: () => {
        throw new Error("D1_ERROR: secret internal detail");
      },
    } as unknown as D1Database;
    const { body, status } = await healthReport({ ...env, DB: brokenDb } as Env, new Set());
    expect(status).toBe(503);
    expect(body).toEqual({
      message: "Service unhealthy",
      version: pkg.version,
      health: { status: "error", redis: { connected: true }, database: { connected: false, error: "database query failed" } },
    });
    expect(JSON.stringify(body)).not.toContain("secret");
  });

  it("reports an unreachable counter store, and a skipped broken check does not fail the status", async () => {
    const brokenKv = { get: () => Promise.reject(new Error("kv down")) } as unknown as KVNamespace;
    const broken = { ...env, CACHE: brokenKv } as Env;
    const failed = await healthReport(broken, new Set());
    expect(failed.status).toBe(503);
    expect(failed.body.health.redis).toMatchObject({ connected: false, error: expect.any(String) });
    expect(failed.body.health.database).toMatchObject({ connected: true });

    const skipped = await healthReport(broken, new Set(["redis"]));
    expect(skipped.status).toBe(200);
    expect(skipped.body.health.status).toBe("ok");
  });
});

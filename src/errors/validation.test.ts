import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import * as z from "zod";
import { onError } from "./on-error";
import { validateBody } from "./validation";

const app = new Hono();
app.onError(onError);
app.post("/plain", validateBody(z.object({ name: z.string() })), (c) => c.json({ ok: true }));
app.post("/hinted", validateBody(z.object({ name: z.string() }), { ttl: "Set TTLs in the dashboard." }), (c) => c.json({ ok: true }));

async function post(path: string, body: string): Promise<{ status: number; error: { message: string; param: string | null; code: string } }> {
  const res = await app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, ...((await res.json()) as { error: { message: string; param: string | null; code: string } }) };
}

describe("validateBody: unknown fields", () => {
  it("names the field, with the route's hint when it has one", async () => {
    expect(await post("/plain", '{"name":"a","colour":"red"}')).toEqual({ status: 400, error: expect.objectContaining({ message: "Unknown field 'colour': this endpoint does not accept it.", param: "colour", code: "unknown_field" }) });
    expect((await post("/hinted", '{"name":"a","ttl":1}')).error.message).toBe("Unknown field 'ttl': this endpoint does not accept it. Set TTLs in the dashboard.");
  });

  it("gives fields named after Object.prototype members no hint", async () => {
    for (const path of ["/plain", "/hinted"]) {
      for (const field of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"]) {
        const { status, error } = await post(path, `{"name":"a","${field}":1}`);
        expect(status, `${path} ${field}`).toBe(400);
        expect(error.message, `${path} ${field}`).toBe(`Unknown field '${field}': this endpoint does not accept it.`);
        expect(error.param).toBe(field);
      }
    }
  });
});

import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import * as z from "zod";
import { onError } from "./on-error";
import { describeZodError, validateBody } from "./validation";

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

describe("describeZodError: messages people can act on", () => {
  const messageOf = (schema: z.ZodType, value: unknown) => {
    const r = schema.safeParse(value);
    if (r.success) throw new Error("expected a failure");
    return describeZodError(r.error);
  };

  it("says what is missing and what is expected, with the same param", () => {
    const responses = z.object({ input: z.union([z.string(), z.array(z.object({ type: z.string() }))]) });
    expect(messageOf(responses, {})).toEqual({ message: "'input' is required: a string or an array.", param: "input" });
    expect(messageOf(z.object({ model: z.string() }), {})).toEqual({ message: "'model' is required: a string.", param: "model" });
    expect(messageOf(responses, { input: 5 })).toEqual({ message: "'input' must be a string or an array.", param: "input" });
  });

  it("names wrong types, choices, bounds and formats", () => {
    expect(messageOf(z.object({ model: z.string() }), { model: 5 }).message).toBe("'model' must be a string, not a number.");
    expect(messageOf(z.object({ role: z.enum(["user", "assistant"]) }), { role: "bot" }).message).toBe("'role' must be one of 'user', 'assistant'.");
    expect(messageOf(z.object({ name: z.string().min(1) }), { name: "" }).message).toBe("'name' must not be empty.");
    expect(messageOf(z.object({ n: z.number().int().min(1) }), { n: 0 }).message).toBe("'n' must be at least 1.");
    expect(messageOf(z.object({ tags: z.array(z.string()).max(2) }), { tags: ["a", "b", "c"] }).message).toBe("'tags' takes at most 2 items.");
    expect(messageOf(z.object({ url: z.url() }), { url: "nope" }).message).toBe("'url' must be a valid url.");
    expect(messageOf(z.object({ a: z.object({ b: z.boolean() }) }), { a: {} })).toEqual({ message: "'a.b' is required: a boolean.", param: "a.b" });
  });

  it("follows the union option that got furthest, and keeps a schema's own message", () => {
    const content = z.object({ content: z.union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() }))]) });
    // param: the union's own path, as before; the sentence names the field inside it
    expect(messageOf(content, { content: [{ type: "text" }] })).toEqual({ message: "'content.0.text' is required: a string.", param: "content" });
    expect(messageOf(z.object({ models: z.array(z.string()).min(1, "at least one model entry is required") }), { models: [] }).message).toBe("'models': at least one model entry is required.");
    expect(messageOf(z.object({ a: z.string() }), [1])).toEqual({ message: "The request body must be an object, not an array.", param: null });
  });
});

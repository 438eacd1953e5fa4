import { describe, expect, it } from "vitest";
import { call, TEST_SECRETS } from "../../../test/helpers/fixtures";
import { MAX_BODY_BYTES } from "./request-context";

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
const admin = { authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}` };

/** A body stream without Content-Length (what a chunked upload looks like to the Worker). */
function chunkedBody(totalBytes: number, chunkBytes = 1024 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const n = Math.min(chunkBytes, totalBytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

async function expectEnvelope(res: Response, status: number, code: string): Promise<ErrorBody["error"]> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  const body = (await res.json()) as ErrorBody;
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.code).toBe(code);
  return body.error;
}

describe("request errors", () => {
  it("malformed JSON is a 400 envelope", async () => {
    const res = await call("/v1/admin/organizations", { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: '{"name": "Acme",' });
    const err = await expectEnvelope(res, 400, "invalid_request");
    expect(err.type).toBe("invalid_request_error");
    expect(err.message).toMatch(/JSON/i);
  });

  it("a body with the wrong or no content type is a 400 envelope", async () => {
    const wrong = await call("/v1/admin/organizations", { method: "POST", headers: { ...admin, "content-type": "text/plain" }, body: "{}" });
    expect((await expectEnvelope(wrong, 400, "unsupported_content_type")).message).toContain("text/plain");
    const none = await call("/v1/master/projects", { method: "POST", headers: { "content-type": "" }, body: "{}" });
    await expectEnvelope(none, 400, "unsupported_content_type");
  });

  it("an oversized declared body is a 413 envelope", async () => {
    const res = await call("/v1/admin/organizations", {
      method: "POST",
      headers: { ...admin, "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) },
      body: "{}",
    });
    await expectEnvelope(res, 413, "request_too_large");
  });

  it("an oversized body without Content-Length (chunked) is a 413 envelope", async () => {
    const res = await call("/v1/admin/organizations", {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: chunkedBody(MAX_BODY_BYTES + 1),
      duplex: "half",
    } as RequestInit);
    await expectEnvelope(res, 413, "request_too_large");
  });

  it("a chunked body under the limit still reaches the handler", async () => {
    const payload = JSON.stringify({ name: "Chunky", plan: "free", owner: { email: "chunky@example.test", name: "C", password: "long-enough-password" } });
    const bytes = new TextEncoder().encode(payload);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    const res = await call("/v1/admin/organizations", { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(201);
  });

  it("unknown routes and methods are 404 envelopes", async () => {
    expect((await expectEnvelope(await call("/v2/whatever"), 404, "route_not_found")).type).toBe("not_found_error");
    await expectEnvelope(await call("/v1/admin/nothing-here", { headers: admin }), 404, "route_not_found");
  });
});

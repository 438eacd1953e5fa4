/**
 * The dashboard's static files, served by the Worker itself (src/dashboard/static-files.ts): every
 * file of public/ with its content type, caching headers and ETag, a 304 on revalidation, and no
 * session needed (the sign-in page loads the stylesheet before anyone is signed in).
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { STATIC_FILES } from "../../src/dashboard/generated/static-files";

const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));

describe("dashboard static files", () => {
  it("serves every file of public/ with its type, ETag and caching headers, without a session", async () => {
    const paths = Object.keys(STATIC_FILES);
    expect(paths).toEqual(expect.arrayContaining(["/dashboard/assets/app.css", "/dashboard/assets/app.js", "/favicon.ico"]));
    for (const [path, file] of Object.entries(STATIC_FILES)) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe(file.type);
      expect(res.headers.get("etag")).toBe(file.etag);
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      // The contract: every gateway response carries x-request-id, a static file's too.
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      if ("text" in file) expect(await res.text()).toBe(file.text);
      else expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytesOf(file.base64));
    }
  });

  it("answers 304 to a matching If-None-Match (strong, weak or in a list), 200 to another", async () => {
    const { etag } = STATIC_FILES["/dashboard/assets/app.css"]!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await call("/dashboard/assets/app.css", { headers: { "if-none-match": header } });
      expect(res.status, header).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(await res.text()).toBe("");
    }
    const changed = await call("/dashboard/assets/app.css", { headers: { "if-none-match": '"an-older-version"' } });
    expect(changed.status).toBe(200);
  });

  it("answers HEAD with the headers and no body, and 404 for a file it does not have", async () => {
    const head = await call("/dashboard/assets/app.js", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await head.text()).toBe("");
    expect((await call("/dashboard/assets/missing.js")).status).toBe(404);
  });
});

import { describe, expect, it } from "vitest";
import type { WireFormat } from "../catalog/types";
import { adapterFor } from "./registry";
import { testTarget } from "./test-target";

const FORMATS: WireFormat[] = ["openai", "azure", "anthropic", "google", "bedrock"];

describe("every adapter's upstream Request", () => {
  it.each(FORMATS)("%s: redirects are not followed and the attempt's signal is carried, so fetch needs no copy", async (wireFormat) => {
    const settings = wireFormat === "bedrock" ? { AWS_BEDROCK_REGION: "us-east-1" } : {};
    const apiKey = wireFormat === "bedrock" ? "" : "sk-test";
    for (const stream of [false, true]) {
      const abort = new AbortController();
      const req = await adapterFor(wireFormat).buildRequest(
        { model: "m", messages: [{ role: "user", content: "hi" }] },
        testTarget({ wireFormat, settings, apiKey }),
        { stream, signal: abort.signal },
      );
      expect(req.redirect).toBe("manual");
      expect(req.signal.aborted).toBe(false);
      abort.abort();
      expect(req.signal.aborted).toBe(true);
    }
  });
});

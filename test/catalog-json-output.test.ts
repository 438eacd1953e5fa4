/**
 * The catalogue's `json_output` / `structured_outputs` flags agree with what the adapters serve.
 * Claude takes `response_format` on Anthropic, Bedrock and Vertex (natively on 4.5 and newer, else
 * through a forced tool: src/providers/anthropic/structured-output.ts), yet the catalogue listed
 * every Claude mapping with `structured_outputs: false`, so a client choosing models by that flag
 * never picked Claude although the gateway would serve the request.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { listModels, PROVIDERS } from "../src/catalog";
import { adapterFor } from "../src/providers/registry";
import { call, seedOrg, type SeededOrg } from "./helpers/fixtures";

let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg();
});

describe("catalogue JSON flags and adapter support", () => {
  it("every mapping whose adapter serves response_format is flagged json_output and structured_outputs", () => {
    const served: string[] = [];
    const unflagged: string[] = [];
    for (const model of listModels()) {
      for (const m of model.mappings) {
        if (adapterFor(PROVIDERS[m.providerId].wireFormat).servesJsonOutput?.(m) !== true) continue;
        served.push(`${m.providerId}/${m.externalId}`);
        if (!m.jsonOutput || !m.structuredOutputs) unflagged.push(`${m.providerId}/${m.externalId} (${model.id})`);
      }
    }
    // Claude on all three platforms, curated and source-listed mappings alike.
    for (const p of ["anthropic/", "aws-bedrock/", "google-vertex/"]) expect(served.some((s) => s.startsWith(p)), p).toBe(true);
    expect(unflagged).toEqual([]);
  });

  it("GET /v1/models lists Claude with structured_outputs and the response_format parameters", async () => {
    const res = await call("/v1/models?include_restricted=true", { key: org.key });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Array<{ id: string; structured_outputs: boolean; json_output: boolean; supported_parameters: string[] }> };
    const claude = data.filter((m) => /^claude-/.test(m.id));
    expect(claude.length).toBeGreaterThan(0);
    for (const m of claude) {
      expect({ id: m.id, structured: m.structured_outputs, json: m.json_output }).toEqual({ id: m.id, structured: true, json: true });
      expect(m.supported_parameters, m.id).toEqual(expect.arrayContaining(["response_format", "structured_outputs"]));
    }
  });
});

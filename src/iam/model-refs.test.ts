import { describe, expect, it } from "vitest";
import { canonicalModelRefs } from "./model-refs";

describe("canonicalModelRefs", () => {
  it("maps aliases and dated ids to the canonical id, keeps provider pins canonical", () => {
    const r = canonicalModelRefs(["gpt-4o-mini-2024-07-18", "GPT-4o-mini", "openai/gpt-4o-mini-2024-07-18"], []);
    expect(r).toEqual({ ok: true, models: ["gpt-4o-mini", "openai/gpt-4o-mini"] });
  });

  it("accepts models of the organization's custom providers and names the first unknown entry", () => {
    expect(canonicalModelRefs(["acme/large"], ["acme"])).toEqual({ ok: true, models: ["acme/large"] });
    const bad = canonicalModelRefs(["gpt-4o-mini", "other/small", "no-such-model"], ["acme"]);
    expect(bad).toMatchObject({ ok: false, index: 1 });
    expect(canonicalModelRefs(["no-such-model"], [])).toMatchObject({ ok: false, index: 0 });
    expect(canonicalModelRefs(["openai/no-such-model"], [])).toMatchObject({ ok: false, index: 0 });
  });
});

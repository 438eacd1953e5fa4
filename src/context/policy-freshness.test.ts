import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../env";
import type { KeyContext } from "./key-context";
import { DEFAULT_POLICY_FRESHNESS_MS, confirmedAt, noteConfirmed, policyFreshnessMs, rulesFreshEnough } from "./policy-freshness";

const withWindow = (v: string | undefined): Env => Object.create(env, { POLICY_FRESHNESS_MS: { value: v, enumerable: true } }) as Env;

/** Only the fields the freshness rules read. */
const ctxOf = (keyId: string, version: number, strictPolicy?: boolean): KeyContext =>
  ({
    key: { id: keyId, version, fingerprint: `fp-${keyId}` },
    organization: { compliance: strictPolicy === undefined ? {} : { strictPolicy } },
  }) as unknown as KeyContext;

describe("policy freshness", () => {
  it("reads the bound from POLICY_FRESHNESS_MS, 30 s when unset or not a number", () => {
    expect(policyFreshnessMs(withWindow(undefined))).toBe(DEFAULT_POLICY_FRESHNESS_MS);
    expect(DEFAULT_POLICY_FRESHNESS_MS).toBe(30_000);
    expect(policyFreshnessMs(withWindow(""))).toBe(30_000);
    expect(policyFreshnessMs(withWindow("soon"))).toBe(30_000);
    expect(policyFreshnessMs(withWindow("-5"))).toBe(30_000);
    expect(policyFreshnessMs(withWindow("1500"))).toBe(1_500);
  });

  it("a confirmation holds for its version only, and a newer version retires the older one", () => {
    const id = `key_${crypto.randomUUID()}`;
    expect(confirmedAt(ctxOf(id, 1))).toBeNull();
    noteConfirmed(id, 1, 1_000);
    expect(confirmedAt(ctxOf(id, 1))).toBe(1_000);
    noteConfirmed(id, 1, 900); // an answer to an older call does not move the time back
    expect(confirmedAt(ctxOf(id, 1))).toBe(1_000);
    noteConfirmed(id, 2, 2_000);
    expect(confirmedAt(ctxOf(id, 1))).toBeNull();
    expect(confirmedAt(ctxOf(id, 2))).toBe(2_000);
    noteConfirmed(id, 1, 3_000); // a late answer about the older version is ignored
    expect(confirmedAt(ctxOf(id, 2))).toBe(2_000);
  });

  it("rules are fresh enough only within the bound, and never in strict mode", () => {
    const id = `key_${crypto.randomUUID()}`;
    const e = withWindow("1000");
    noteConfirmed(id, 3, 10_000);
    expect(rulesFreshEnough(e, ctxOf(id, 3), 10_999)).toBe(true);
    expect(rulesFreshEnough(e, ctxOf(id, 3), 11_000)).toBe(false);
    expect(rulesFreshEnough(e, ctxOf(id, 2), 10_001)).toBe(false);
    expect(rulesFreshEnough(e, ctxOf(id, 3, true), 10_001)).toBe(false);
    expect(rulesFreshEnough(e, ctxOf(id, 3, false), 10_001)).toBe(true);
  });
});

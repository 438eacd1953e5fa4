import { env as workerEnv } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { KeyContext, ProviderKeyRecord } from "../context/key-context";
import type { Env } from "../env";
import { findModel } from "../catalog";
import type { ChatRequest } from "../providers/types";
import { selectCandidates, type Candidate } from "./candidates";
import { orderCandidates } from "./order";
import { resolveCredential } from "./credentials";
import { pickKey } from "./key-choice";
import { callerContinent, continentOf, regionMatches } from "./regions";
import { distancePriorMs } from "./regions";
import type { RouteStats } from "./score";
import type { Continent } from "./regions";
import { reportAttempts, resetLiveMetrics } from "./live-metrics";
import { metricsProviderId } from "./candidate-stats";
import { planFor } from "../routes/chat/admit";

const MODEL = "nova-lite";

function ctx(over: { mode?: KeyContext["project"]["mode"]; keys?: ProviderKeyRecord[]; regions?: string[] } = {}): KeyContext {
  return {
    key: {
      id: "key_1", organizationId: "org_1", projectId: "prj_1", createdBy: "mem_1", description: "", kind: "standard",
      status: "active", fingerprint: "fp", expiresAt: null, usageLimit: null, periodUsageLimit: null,
      periodUsageDurationValue: null, periodUsageDurationUnit: null, version: 1,
    },
    organization: { id: "org_1", name: "Org", plan: "enterprise", compliance: over.regions ? { regions: over.regions } : {}, notifications: {} },
    project: { id: "prj_1", name: "P", mode: over.mode ?? "credits", cachingEnabled: false, cacheDurationSeconds: 0, logBodies: false },
    member: { id: "mem_1", role: "owner", userId: "usr_1", email: "o@x.test", name: "O", teamIds: [] },
    rules: { team: [], member: [], key: [] },
    customProviders: [],
    customModels: [],
    providerKeys: over.keys ?? [],
    loadedAt: 0,
  };
}

const env = {
  AWS_BEDROCK_API_KEY: "op-key",
  AWS_BEDROCK_BASE_URL: "https://bedrock.test/us",
  AWS_BEDROCK_BASE_URL__EU_CENTRAL_1: "https://bedrock.test/eu",
  AWS_BEDROCK_BASE_URL__AP_NORTHEAST_1: "https://bedrock.test/ap",
} as unknown as Env;

const req: ChatRequest = { model: MODEL, messages: [{ role: "user", content: "hi" }] };
const select = (k: KeyContext): Candidate[] => {
  const model = findModel(MODEL)!;
  const s = selectCandidates(env, k, { kind: "catalog", model, pinned: null }, req, null);
  if (!s.ok) throw s.error;
  return s.candidates;
};
const noStats = (): RouteStats => ({ uptime: 1, throughput: null, latencyMs: null, samples: 0 });

describe("regional endpoints", () => {
  it("each <ID>_BASE_URL__<REGION> is a candidate of its own beside the default endpoint", () => {
    expect(select(ctx()).map((c) => c.region)).toEqual(["us-east-1", "ap-northeast-1", "eu-central-1"]);
  });

  it("a regional candidate resolves to its base URL and signs for its region", async () => {
    const eu = select(ctx()).find((c) => c.region === "eu-central-1")!;
    const cred = await resolveCredential(env, eu.credential, eu.provider.baseUrl);
    expect(cred.baseUrl).toBe("https://bedrock.test/eu");
    expect(cred.settings.AWS_BEDROCK_REGION).toBe("eu-central-1");
  });

  it("residency (compliance regions) keeps only the endpoints in them", () => {
    expect(select(ctx({ regions: ["EU"] })).map((c) => c.region)).toEqual(["eu-central-1"]);
    expect(select(ctx({ regions: ["ap-northeast-1", "us-east-1"] })).map((c) => c.region)).toEqual(["us-east-1", "ap-northeast-1"]);
  });

  it("a provider key with a region adds that endpoint for its organization", () => {
    const keys: ProviderKeyRecord[] = [{ id: "pk_1", provider: "aws-bedrock", label: null, baseUrl: null, tokenCiphertext: "c", region: "eu-west-3" }];
    const regions = select(ctx({ mode: "api-keys", keys })).map((c) => c.region);
    expect(regions).toEqual(["eu-west-3"]);
  });

  it("the caller's continent ranks the near endpoint first (distance prior)", () => {
    const cands = select(ctx());
    const needs = { stream: false, tools: false, vision: false, audio: false, audioOutput: false, files: false, json: "none" as const, n: 1, promptTokens: 10, maxTokens: 10 };
    for (const [continent, first] of [["EU", "eu-central-1"], ["AS", "ap-northeast-1"], ["NA", "us-east-1"]] as const) {
      const plan = orderCandidates(cands, { ...needs, callerContinent: continent }, {
        noFallback: false,
        explorationRate: 0,
        pinnedProbeRate: 0,
        stats: (c) => ({ ...noStats(), latencyMs: 300 + distancePriorMs(continent, c.region) }),
      });
      expect(plan[0]!.region).toBe(first);
    }
  });
});

describe("regions", () => {
  it("matches regions and continent codes; a global endpoint matches nothing", () => {
    expect(regionMatches("EU", "eu-central-1")).toBe(true);
    expect(regionMatches("EU", "europe-west4")).toBe(true);
    expect(regionMatches("AS", "asia-northeast1")).toBe(true);
    expect(regionMatches("eu", "eu")).toBe(true);
    expect(regionMatches("EU", "us-east-1")).toBe(false);
    expect(regionMatches("EU", "")).toBe(false);
    expect(regionMatches("NA", "global")).toBe(false);
    expect(continentOf("eu-north1")).toBe("EU");
  });

  it("the caller's continent: cf.continent, overridden by x-debug-caller-continent outside production only", () => {
    const r = new Request("https://gw.test/", { headers: { "x-debug-caller-continent": "as" } });
    expect(callerContinent(r, false)).toBe("AS");
    expect(callerContinent(r, true)).toBeNull();
  });

  it("reads request.cf once per caller address: the runtime parses the whole cf object on each first read", () => {
    const reads = new Map<string, number>();
    const from = (ip: string | null, continent: string) => {
      const headers = new Headers(ip ? { "cf-connecting-ip": ip } : {});
      return {
        headers,
        get cf() {
          reads.set(ip ?? "none", (reads.get(ip ?? "none") ?? 0) + 1);
          return { continent };
        },
      } as unknown as Request;
    };
    for (let i = 0; i < 3; i++) {
      expect(callerContinent(from("203.0.113.7", "EU"), true)).toBe("EU");
      expect(callerContinent(from("198.51.100.9", "AS"), true)).toBe("AS");
      expect(callerContinent(from(null, "OC"), true)).toBe("OC");
    }
    expect(Object.fromEntries(reads)).toEqual({ "203.0.113.7": 1, "198.51.100.9": 1, none: 3 });
  });
});

describe("weighted key choice", () => {
  it("spreads within a point of the weights over 10,000 choices, and skips keys already tried", () => {
    const keys: ProviderKeyRecord[] = [
      { id: "a", provider: "openai", label: null, baseUrl: null, tokenCiphertext: "c", weight: 3 },
      { id: "b", provider: "openai", label: null, baseUrl: null, tokenCiphertext: "c", weight: 1 },
    ];
    let a = 0;
    for (let i = 0; i < 10_000; i++) if (pickKey(keys, new Set())!.id === "a") a++;
    expect(Math.abs(a / 10_000 - 0.75)).toBeLessThan(0.02);
    expect(pickKey(keys, new Set(["a"]))!.id).toBe("b");
    expect(pickKey(keys, new Set(["a", "b"]))).toBeNull();
  });
});

/**
 * Ranking per caller continent over a run of requests: the plan each request gets (the real
 * planFor, exploration at the production 5% with a seeded random), fed back with what the caller
 * would measure (upstream 215 ms + the network between continents: near 15, NA-EU 90, NA-AS 150,
 * EU-AS 180), as the regions bench does.
 */
describe("ranking per caller continent over many requests", () => {
  const NET: Record<string, Record<string, number>> = { NA: { NA: 15, EU: 90, AS: 150 }, EU: { NA: 90, EU: 15, AS: 180 }, AS: { NA: 150, EU: 180, AS: 15 } };
  const CONT: Record<string, string> = { "us-east-1": "NA", "eu-central-1": "EU", "ap-northeast-1": "AS" };
  const exploring = { ...env, ROUTING_EXPLORATION_RATE: "0.05" } as unknown as Env;
  const needs = { stream: true, tools: false, vision: false, audio: false, audioOutput: false, files: false, json: "none" as const, n: 1, promptTokens: 10, maxTokens: 16 };
  const plan = (continent: Continent) => planFor(exploring, new Headers(), select(ctx()), { ...needs, callerContinent: continent });
  const measure = (continent: Continent, region: string, ttftMs: number | null, n = 1) => {
    const cand = select(ctx()).find((c) => c.region === region)!;
    const sample = { provider: metricsProviderId(cand), model: cand.modelId, at: Date.now(), outcome: ttftMs === null ? ("error" as const) : ("ok" as const), ttftMs, outputTokens: ttftMs === null ? 0 : 16, generationMs: ttftMs === null ? null : 40 };
    reportAttempts(workerEnv, () => undefined, Array.from({ length: n }, () => ({ ...sample })), continent);
  };
  /** `count` requests from `continent`, each measured where its plan sent it first; returns the first regions. */
  const run = (continent: Continent, count: number): string[] =>
    Array.from({ length: count }, () => {
      const first = plan(continent)[0]!;
      measure(continent, first.region, 215 + NET[continent]![CONT[first.region]!]!);
      return first.region;
    });

  let seed = 0;
  beforeEach(() => {
    resetLiveMetrics();
    seed = 42;
    // mulberry32: the same draws on every run.
    vi.spyOn(Math, "random").mockImplementation(() => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it("slow first samples (a cold start) do not lock a continent onto a far region: exploration brings it back", () => {
    // Warm-up: Europe and Asia measured their own regions; North America's first three attempts on
    // its own region were slow (cold isolate, new connections), which once sent it far for good.
    measure("EU", "eu-central-1", 230, 10);
    measure("AS", "ap-northeast-1", 230, 10);
    measure("NA", "us-east-1", 600, 3);
    const firsts = run("NA", 400);
    const last = firsts.slice(-200);
    expect(last.filter((r) => r === "us-east-1").length / last.length).toBeGreaterThanOrEqual(0.9);
  });

  it("before any evidence from its continent, an endpoint measured elsewhere does not pull a caller far", () => {
    // Europe measured its region; nobody measured North America's yet (unknown is not slow).
    measure("EU", "eu-central-1", 230, 10);
    expect(plan("NA")[0]!.region).toBe("us-east-1");
  });

  it("failover follows nearness for the caller's continent: Europe's region down, North America's next, Asia's last", () => {
    measure("NA", "us-east-1", 240, 20);
    measure("AS", "ap-northeast-1", 200, 20);
    // Inside a request: the near region first, then the next nearest.
    expect(plan("EU").map((c) => c.region)).toEqual(["eu-central-1", "us-east-1", "ap-northeast-1"]);
    // After its failures, new requests start on the next nearest.
    measure("EU", "eu-central-1", null, 8);
    expect(plan("EU").map((c) => c.region)).toEqual(["us-east-1", "ap-northeast-1", "eu-central-1"]);
  });
});

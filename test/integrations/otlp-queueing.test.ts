/**
 * Queueing spans for export: the records are applied before their spans are queued, so a batch the
 * LOGS queue redelivers would not export them again. A transient failure of the queue send is
 * retried, and no sendBatch exceeds the Queues limits (100 messages, 256 KB), so no span is lost.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg } from "../helpers/fixtures";
import { exportSpans, type OtlpMessage } from "../../src/integrations/otlp";
import { logRowJson, toLogRow } from "../../src/usage/request-log";
import { recordFromRow } from "../../src/usage/log-record";
import type { KeyContext } from "../../src/context/key-context";
import type { Env } from "../../src/env";

/** A DELIVERIES stand-in with the Queues limits, failing its first `failures` sends. */
function deliveries(failures: number) {
  const sent: OtlpMessage[] = [];
  let calls = 0;
  const queue = {
    send: () => Promise.reject(new Error("not used")),
    sendBatch: async (batch: Iterable<{ body: OtlpMessage }>) => {
      const list = [...batch];
      calls++;
      if (calls <= failures) throw new Error("Unknown Internal Error (15000)");
      const bytes = list.reduce((n, m) => n + JSON.stringify(m.body).length, 0);
      if (list.length > 100 || bytes > 256_000) throw new Error(`batch too large: ${list.length} messages, ${bytes} bytes`);
      sent.push(...list.map((m) => m.body));
    },
  };
  return { queue, sent };
}

const requestIds = (sent: OtlpMessage[]): string[] =>
  sent.flatMap((m) =>
    (JSON.parse(m.payload) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ attributes: Array<{ key: string; value: { stringValue?: string } }> }> }> }> }).resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.attributes.find((a) => a.key === "switchboard.request_id")!.value.stringValue!)),
    ),
  );

describe("queueing spans", () => {
  it("retries a failed send and keeps every sendBatch within the Queues limits: each span queued once", async () => {
    const o = await seedOrg();
    expect((await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: { otlpEndpoint: `${env.FAKE_UPSTREAM_URL}/receiver/otlp-queueing` } }) })).status).toBe(200);
    const auth = { organization: { id: o.orgId }, project: { id: o.projectId }, key: { id: o.keyId } } as unknown as KeyContext;
    // Long error messages make each span large: several messages of ~100 KB each.
    const records = Array.from({ length: 300 }, (_, i) =>
      recordFromRow(JSON.parse(logRowJson(toLogRow({
        logId: `log_q${i}`, requestId: `req_q${i}`, auth, sourceApp: "bench", requestedModel: "gpt-4o-mini", usedProvider: "openai", usedModel: "gpt-4o-mini",
        statusCode: 502, errorType: "upstream_error", errorMessage: "x".repeat(290), createdAt: Date.now() - i,
      }))) as unknown[]),
    );
    const { queue, sent } = deliveries(1);
    await exportSpans({ ...env, DELIVERIES: queue } as unknown as Env, records);
    const ids = requestIds(sent);
    expect(sent.length).toBeGreaterThan(2);
    expect(ids.sort()).toEqual(records.map((r) => r.requestId).sort());
  });
});

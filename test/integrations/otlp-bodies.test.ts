/**
 * Bodies in OpenTelemetry spans: a project with `logBodies` sends its prompt and answer as the
 * GenAI conventions' `gen_ai.client.inference.operation.details` span event (secrets removed as in
 * storage); a project without it sends no event at all.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg } from "../helpers/fixtures";
import { chat, setProject, waitForLog } from "../chat/helpers";

type Json = Record<string, any>;
const receiver = (name: string) => `${env.FAKE_UPSTREAM_URL}/receiver/${name}`;

async function spans(name: string, n: number): Promise<Json[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const got = ((await (await fetch(receiver(name))).json()) as Array<{ status: number; body: string }>)
      .filter((r) => r.status === 200)
      .flatMap((r) => (JSON.parse(r.body) as Json).resourceSpans.flatMap((rs: Json) => rs.scopeSpans.flatMap((ss: Json) => ss.spans)));
    if (got.length >= n || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const eventAttrs = (e: Json): Record<string, unknown> => Object.fromEntries(e.attributes.map((a: Json) => [a.key, a.value.stringValue ?? a.value.boolValue]));

describe("bodies in spans", () => {
  it("adds the operation-details event only for a project that keeps bodies", async () => {
    const o = await seedOrg();
    const name = `otlp-bodies-${crypto.randomUUID().slice(0, 8)}`;
    expect((await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ observability: { otlpEndpoint: receiver(name) } }) })).status).toBe(200);

    const plain = await chat(o.key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "not kept" }] });
    const plainId = plain.headers.get("x-request-id")!;
    await waitForLog(plainId);
    await setProject(o.projectId, { logBodies: true });
    const kept = await chat(o.key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "my key is sk-abcdefghijklmnopqrstuvwxyz0123456789 please help" },
      ],
    });
    const keptId = kept.headers.get("x-request-id")!;
    await waitForLog(keptId);

    const got = await spans(name, 2);
    const byId = (id: string) => got.find((s) => s.attributes.some((a: Json) => a.key === "switchboard.request_id" && a.value.stringValue === id))!;
    expect(byId(plainId).events).toBeUndefined();
    const events = byId(keptId).events as Json[];
    expect(events).toHaveLength(1);
    expect(events[0]!.name).toBe("gen_ai.client.inference.operation.details");
    const a = eventAttrs(events[0]!);
    expect(JSON.parse(a["gen_ai.system_instructions"] as string)).toEqual([{ type: "text", content: "be brief" }]);
    const input = JSON.parse(a["gen_ai.input.messages"] as string) as Json[];
    expect(input).toHaveLength(1);
    expect(input[0]!.role).toBe("user");
    expect(input[0]!.parts[0].content).toContain("[secret]");
    expect(a["gen_ai.input.messages"]).not.toContain("sk-abcdefghij");
    const output = JSON.parse(a["gen_ai.output.messages"] as string) as Json[];
    expect(output[0]).toMatchObject({ role: "assistant", finish_reason: "stop" });
    expect(output[0]!.parts[0].type).toBe("text");
    expect(a["switchboard.body_truncated"]).toBe(false);
  });
});

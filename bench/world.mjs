// @ts-check
/**
 * `npm run bench -- --world`: what a caller far from the primary region pays before the first
 * byte, per traffic class. Every binding on the request path gets a latency (src/lib/debug-world.ts
 * and src/durable-objects/debug-latency.ts): budget Durable Objects (--obj-latency, default 150 ms),
 * D1 primary (--d1-primary, 150), D1 read replica (--d1-replica, 5), KV (--kv-latency, 5), and the
 * upstream a time to first token (--ttft, 400; the fake upstream's `ttft=` directive). Requests are
 * streamed; time to first byte (TTFB) is the time to the first body chunk. The floor is the bare
 * pass-through Worker in front of the same upstream, measured at the same moments.
 *
 * Classes:
 *  - hot: one key, c=32, back to back (--world-seconds per side);
 *  - long tail: --tail-keys keys (default 24), each sends one request every 5 s through the same
 *    (warm) isolate, staggered, for --tail-seconds (default 60; the key context cache lives 60 s,
 *    so a run this long includes its reloads); the first request of each key is warm-up;
 *  - cold: --cold-keys fresh keys (default 48), one request each: a key the isolate has never seen;
 *  - --world-strict: the organization in strict policy mode (every class then waits for the key's
 *    object before its upstream call unless a lease answers);
 *  - refusals: a key at its limit and a disabled key each send --refusal-requests requests; the
 *    early upstream calls cancelled for them are counted (operator exposure).
 * Each Switchboard response carries `x-gateway-path-calls` (DEBUG_PATH_CALLS=1): the far (object,
 * D1 primary) and near (replica, KV) remote calls that sat on the path to its first byte.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const r1 = (x) => Math.round(x * 10) / 10;

/** World bindings for Switchboard (the floor has no bindings to slow down). */
export function worldBindings(o) {
  return {
    DO_LATENCY_MS: String(o.objMs),
    D1_PRIMARY_LATENCY_MS: String(o.primaryMs),
    D1_REPLICA_LATENCY_MS: String(o.replicaMs),
    KV_LATENCY_MS: String(o.kvMs),
    DEBUG_PATH_CALLS: "1",
  };
}

// Every request is unique: the response cache (on for the bench project) must never answer.
let seq = 0;
const run = Math.random().toString(36).slice(2);
const body = (ttft, i = 0) =>
  JSON.stringify({
    model: "gpt-4o-mini",
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 16,
    messages: [{ role: "user", content: `Say hello to the world bench ${run} ${i} ${seq++} [[fake:ttft=${ttft}]]` }],
  });

/** One streamed request: TTFB, the path-calls header, the status. */
async function ttfb(url, headers, payload) {
  const sentAt = Date.now();
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: payload });
  let first = NaN;
  let firstAt = NaN;
  // The last byte (after the stream's final event and [DONE]): the record is durable before it.
  let last = NaN;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        last = performance.now() - t0;
        break;
      }
      if (value?.length && Number.isNaN(first)) {
        first = performance.now() - t0;
        firstAt = Date.now();
      }
    }
  }
  const calls = /far=(\d+);near=(\d+);cancelled=(\d+)/.exec(res.headers.get("x-gateway-path-calls") ?? "");
  return {
    ms: res.status === 200 ? first : NaN,
    lastMs: res.status === 200 ? last : NaN,
    status: res.status,
    far: calls ? Number(calls[1]) : NaN,
    near: calls ? Number(calls[2]) : NaN,
    cancelled: calls ? Number(calls[3]) : NaN,
    overhead: Number(res.headers.get("x-gateway-overhead-ms") ?? NaN),
    timing: timingOf(res.headers.get("x-gateway-path-timing")),
    sentAt,
    firstAt,
  };
}

/** `x-gateway-path-timing` (`key=0;exec=1;up=1;...;release=402`): ms since the Worker got the request, by step. */
const timingOf = (h) => Object.fromEntries((h ?? "").split(";").filter(Boolean).map((kv) => [kv.split("=")[0], Number(kv.split("=")[1])]));

/** The steps a class's requests report, in their usual order (by p50). */
export const STEPS = ["key", "exec", "early", "up", "admitted", "credits", "first", "release"];

/** A JSON call to the gateway's API; throws on an error status. */
export async function api(url, token, method, payload) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: payload ? JSON.stringify(payload) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** An enterprise organization with credits (and strict policy on request); `newKey(extra)` makes keys in its project. */
export async function seedWorld(sb, adminToken, strict = false) {
  const boot = await api(`${sb.url}/v1/admin/organizations`, adminToken, "POST", {
    name: "World",
    plan: "enterprise",
    owner: { email: "world@example.test", name: "World", password: "world-password-123" },
  });
  await sb.db.prepare("UPDATE organizations SET credits_pico = ? WHERE id = ?").bind(1_000_000 * 1e12, boot.organization.id).run();
  const master = boot.masterKey.token;
  if (strict) await api(`${sb.url}/v1/master/organization`, master, "PATCH", { compliance: { strictPolicy: true } });
  const newKey = async (extra = {}) => {
    const created = await api(`${sb.url}/v1/master/keys`, master, "POST", { projectId: boot.project.id, description: "world", usageLimit: "1000000", ...extra });
    return { token: created.apiKey.token, id: created.apiKey.id };
  };
  const many = async (n) => {
    const out = [];
    for (let i = 0; i < n; i += 8) out.push(...(await Promise.all(Array.from({ length: Math.min(8, n - i) }, () => newKey()))));
    return out;
  };
  return { master, newKey, many };
}

function summarize(name, floor, sb) {
  const ok = sb.filter((s) => Number.isFinite(s.ms));
  const fl = floor.filter((s) => Number.isFinite(s.ms));
  const far = ok.map((s) => s.far);
  return {
    class: name,
    requests: sb.length,
    errors: sb.length - ok.length + (floor.length - fl.length),
    floorP50: r1(pct(fl.map((s) => s.ms), 50)),
    floorP99: r1(pct(fl.map((s) => s.ms), 99)),
    p50: r1(pct(ok.map((s) => s.ms), 50)),
    p99: r1(pct(ok.map((s) => s.ms), 99)),
    addedP50: r1(pct(ok.map((s) => s.ms), 50) - pct(fl.map((s) => s.ms), 50)),
    addedP99: r1(pct(ok.map((s) => s.ms), 99) - pct(fl.map((s) => s.ms), 99)),
    // Time to the last byte over the floor's (the stream's end waits for the durable record).
    lastAddedP50: r1(pct(ok.map((s) => s.lastMs), 50) - pct(fl.map((s) => s.lastMs), 50)),
    lastAddedP99: r1(pct(ok.map((s) => s.lastMs), 99) - pct(fl.map((s) => s.lastMs), 99)),
    farP50: pct(far, 50),
    farMean: Math.round((1000 * far.reduce((a, b) => a + b, 0)) / Math.max(1, far.length)) / 1000,
    farShare: r1((100 * far.filter((x) => x > 0).length) / Math.max(1, far.length)),
    nearP50: pct(ok.map((s) => s.near), 50),
    overheadP50: pct(ok.map((s) => s.overhead), 50),
    overheadP99: pct(ok.map((s) => s.overhead), 99),
    // Where the time goes (p50 of each step's ms since the Worker got the request), and the
    // client's TTFB beyond the Worker's release of the headers (accept, body upload, delivery).
    steps: Object.fromEntries(STEPS.map((n) => [n, pct(ok.map((s) => s.timing?.[n]).filter((x) => x !== undefined), 50)])),
    outsideP50: r1(pct(ok.map((s) => s.ms - (s.timing?.release ?? NaN)), 50)),
    // Same clock (one machine): the client's send to the Worker's start, and the Worker's release
    // of the headers to the client's first body chunk.
    inboundP50: pct(ok.map((s) => (s.timing?.at ?? NaN) - s.sentAt), 50),
    inboundP99: pct(ok.map((s) => (s.timing?.at ?? NaN) - s.sentAt), 99),
    outboundP50: pct(ok.map((s) => s.firstAt - ((s.timing?.at ?? NaN) + (s.timing?.release ?? NaN))), 50),
    firstToReleaseP50: pct(ok.map((s) => (s.timing?.release ?? NaN) - (s.timing?.first ?? NaN)), 50),
  };
}

/**
 * c concurrent loops for `seconds`. `spreadMs`: loop w starts w * spreadMs / c later (its
 * requests counted from then on), so arrivals are spread over one cycle instead of 32 at once.
 */
async function closedLoop(url, headers, ttft, c, seconds, spreadMs = 0) {
  const out = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: c }, async (_, w) => {
    if (spreadMs > 0) await sleep((w * spreadMs) / c);
    for (let i = 0; performance.now() < end; i++) out.push(await ttfb(url, headers, body(ttft, w * 100000 + i)));
  }));
  return out;
}

/** `--world --cpu-profile`: a hot key's streamed request with the world's first-token time (autocannon target). */
export async function worldProfileTarget({ sb, adminToken, o }) {
  const w = await seedWorld(sb, adminToken);
  const key = await w.newKey();
  return { name: "switchboard world hot key", url: `${sb.url}/v1/chat/completions`, body: body(o.ttft), headers: { authorization: `Bearer ${key.token}`, "x-no-cache": "true" }, pid: sb.pid };
}

/** Samples and workerd CPU of one target over several blocks of a class. */
const tally = () => ({ samples: [], cpuMs: 0 });

/**
 * The world classes against each Switchboard of `sbs` (`[{ label, sb }]`: this build, and with
 * `--baseline` an earlier one), interleaved so that every build sees the same machine: the hot
 * classes in alternating blocks (floor, then each build, the order rotating per block), the long
 * tail and cold isolates at the same moments (one request to the floor and to each build at once).
 */
export async function runWorld({ sbs, pt, adminToken, o, cpu = () => NaN }) {
  const floorUrl = `${pt.url}/v1/chat/completions`;
  const floorAuth = { authorization: "Bearer bench-operator-key-openai" };
  // --world-no-cache: Switchboard requests skip the response cache (no KV read before the upstream
  // call, no KV write after the answer), to measure what the cache costs each class.
  const auth = (token) => ({ authorization: `Bearer ${token}`, ...(o.noCache ? { "x-no-cache": "true" } : {}) });
  const urlOf = (t) => `${t.sb.url}/v1/chat/completions`;
  const seedT0 = performance.now();
  const worlds = [];
  for (const t of sbs) {
    const w = await seedWorld(t.sb, adminToken, o.strict);
    worlds.push({ ...t, w, hotKey: await w.newKey(), tail: await w.many(o.tailKeys), cold: await w.many(o.coldKeys) });
  }
  console.log(`world: seeded ${sbs.length} x ${2 + o.tailKeys + o.coldKeys} keys in ${r1((performance.now() - seedT0) / 1000)} s`);
  const classes = [];
  const perRequest = (ms, n) => Math.round((100 * ms) / Math.max(1, n)) / 100;
  const push = (name, floor, per, floorCpuMs = NaN) =>
    worlds.forEach((t, i) =>
      classes.push({ ...summarize(name, floor, per[i].samples), target: t.label, cpuPerRequest: perRequest(per[i].cpuMs, per[i].samples.length), floorCpuPerRequest: perRequest(floorCpuMs, floor.length) }),
    );

  // Hot key: c=32 back to back, in blocks; warm-up first.
  for (const t of worlds) await closedLoop(urlOf(t), auth(t.hotKey.token), o.ttft, 8, 2);
  await closedLoop(floorUrl, floorAuth, o.ttft, 8, 1);
  const blocks = Math.max(1, o.hotBlocks);
  const hotClass = async (name, spreadMs, c = 32) => {
    const floor = [];
    const per = worlds.map(tally);
    let floorCpuMs = 0;
    for (let b = 0; b < blocks; b++) {
      const f0 = cpu(pt);
      floor.push(...(await closedLoop(floorUrl, floorAuth, o.ttft, c, o.hotSeconds / blocks, spreadMs)));
      floorCpuMs += cpu(pt) - f0;
      for (let k = 0; k < worlds.length; k++) {
        const i = (b + k) % worlds.length;
        const t = worlds[i];
        const c0 = cpu(t.sb);
        per[i].samples.push(...(await closedLoop(urlOf(t), auth(t.hotKey.token), o.ttft, c, o.hotSeconds / blocks, spreadMs)));
        per[i].cpuMs += cpu(t.sb) - c0;
      }
    }
    push(name, floor, per, floorCpuMs);
    return per[0].samples.length;
  };
  const hotN = await hotClass("hot key (c=32)", 0);
  // The same key and concurrency with the 32 loops' starts spread over one cycle (the upstream's
  // first token): above, all 32 start together and, every response taking the same time, keep
  // arriving as one burst of 32 that queues on workerd's one thread for the CPU of the burst.
  await hotClass("hot key (c=32, arrivals spread)", o.ttft);
  // The same key alone (c=1, its lease live): what the gateway adds to a hot key's request when
  // nothing else waits for workerd's thread (the c=32 rows add the thread's queue to it).
  await hotClass("hot key (c=1)", 0, 1);
  console.log(`world: hot done (${hotN} requests per build and row)`);

  /** Runs `send(i)` for the floor and every build at once; appends to their tallies. */
  const together = async (floor, per, floorPayload, sbRequest) => {
    const [f, ...rest] = await Promise.all([ttfb(floorUrl, floorAuth, floorPayload), ...worlds.map((t, i) => sbRequest(t, i))]);
    return { f, rest, keep: () => (floor.push(f), rest.forEach((r, i) => per[i].samples.push(r))) };
  };
  const cpuSpan = async (per, run) => {
    const c0 = worlds.map((t) => cpu(t.sb));
    await run();
    worlds.forEach((t, i) => (per[i].cpuMs += cpu(t.sb) - c0[i]));
  };

  // Long tail: each key one request every 5 s, staggered; a floor request at the same moment.
  const tailFloor = [];
  const tailPer = worlds.map(tally);
  const period = 5000;
  await cpuSpan(tailPer, () =>
    Promise.all(Array.from({ length: o.tailKeys }, async (_, k) => {
      await sleep((k * period) / o.tailKeys);
      const end = performance.now() + o.tailSeconds * 1000;
      for (let n = 0; performance.now() < end; n++) {
        const t0 = performance.now();
        const r = await together(tailFloor, tailPer, body(o.ttft, n), (t) => ttfb(urlOf(t), auth(t.tail[k].token), body(o.ttft, n)));
        if (n > 0) r.keep();
        await sleep(Math.max(0, period - (performance.now() - t0)));
      }
    })),
  );
  push(`long tail (${o.tailKeys} keys, 1 req / 5 s each)`, tailFloor, tailPer);
  console.log(`world: long tail done (${tailPer[0].samples.length} requests per build)`);

  // Cold: every request on a key this isolate has never seen, four a second.
  const coldFloor = [];
  const coldPer = worlds.map(tally);
  await cpuSpan(coldPer, () =>
    Promise.all(Array.from({ length: o.coldKeys }, async (_, k) => {
      await sleep(k * 250);
      (await together(coldFloor, coldPer, body(o.ttft, k), (t) => ttfb(urlOf(t), auth(t.cold[k].token), body(o.ttft, k)))).keep();
    })),
  );
  push("cold isolate (fresh key)", coldFloor, coldPer);
  console.log(`world: cold done (${coldPer[0].samples.length} requests per build)`);

  const refused = [];
  for (const t of worlds) refused.push({ target: t.label, ...(await refusalsOf(t, o, urlOf(t), auth)) });
  console.log(`world: refusals done`);
  return { classes, refused };
}

/** A key whose limit is spent and a disabled key, at long-tail pace (one per 250 ms): statuses and early calls cancelled. */
async function refusalsOf(t, o, sbUrl, auth) {
  const { w, hotKey } = t;
  const probe = async () => (await ttfb(sbUrl, auth(hotKey.token), body(0))).cancelled;
  const before = await probe();
  const spent = await w.newKey({ usageLimit: "0.000000000001" });
  await ttfb(sbUrl, auth(spent.token), body(0)); // spends past the tiny limit
  await sleep(1500);
  const disabled = await w.newKey();
  await ttfb(sbUrl, auth(disabled.token), body(0)); // cached in the isolate, lease granted
  await api(`${t.sb.url}/v1/master/keys/${disabled.id}`, w.master, "PATCH", { status: "inactive" });
  const refusals = { limit: [], disabled: [] };
  for (let i = 0; i < o.refusalRequests; i++) {
    refusals.limit.push((await ttfb(sbUrl, auth(spent.token), body(o.ttft, i))).status);
    refusals.disabled.push((await ttfb(sbUrl, auth(disabled.token), body(o.ttft, i))).status);
    await sleep(250);
  }
  const after = await probe();
  return {
    requests: 2 * o.refusalRequests,
    limitStatuses: [...new Set(refusals.limit)],
    disabledStatuses: [...new Set(refusals.disabled)],
    cancelledEarly: Number.isFinite(after - before) ? after - before : null,
  };
}

export function renderWorld(s) {
  const o = s.config;
  const ab = new Set(s.classes.map((c) => c.target)).size > 1;
  const name = (c) => (ab ? `${c.class}, ${c.target}` : c.class);
  const lines = [
    `World-latency benchmark ${s.date} — ${s.machine.cores} cores (${s.machine.cpu}), ${s.machine.memoryGiB} GiB, Node ${s.machine.node}${s.load ? `; load average ${s.load.before} before, ${s.load.after} after` : ""}`,
    "",
    `Latencies: object ${o.objMs} ms, D1 primary ${o.primaryMs} ms, D1 replica ${o.replicaMs} ms, KV ${o.kvMs} ms, upstream first token ${o.ttft} ms. Streamed requests; TTFB = first body chunk.${ab ? ` Builds: ${s.builds.map((b) => `${b.label} (${b.ref})`).join(", ")}, interleaved.` : ""}`,
    "",
    "| class | requests | floor TTFB p50 / p99 ms | Switchboard TTFB p50 / p99 ms | added p50 | added p99 | far round trips before first byte (p50, mean, % of requests with any) | near (p50) | pipeline ms after the key lookup, x-gateway-overhead-ms (p50 / p99) | errors |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...s.classes.map((c) => `| ${name(c)} | ${c.requests} | ${c.floorP50} / ${c.floorP99} | ${c.p50} / ${c.p99} | ${c.addedP50} | ${c.addedP99} | ${c.farP50}, ${c.farMean}, ${c.farShare}% | ${c.nearP50} | ${c.overheadP50} / ${c.overheadP99} | ${c.errors} |`),
    "",
    "Where the time goes (p50 ms since the Worker got the request; `x-gateway-path-timing`): key resolved, pipeline entered, cache read done and early call started, upstream call started, admitted, credits answered, upstream first byte, headers released; then the client's TTFB beyond the release.",
    "",
    `| class | ${STEPS.join(" | ")} | release - first | client TTFB - release | client send to Worker start (p50 / p99) | release to client's first chunk | workerd CPU ms / request (floor's) |`,
    `|---|${STEPS.map(() => "---|").join("")}---|---|---|---|---|`,
    ...s.classes.map((c) => `| ${name(c)} | ${STEPS.map((n) => c.steps?.[n] ?? "").join(" | ")} | ${c.firstToReleaseP50} | ${c.outsideP50} | ${c.inboundP50} / ${c.inboundP99} | ${c.outboundP50} | ${c.cpuPerRequest ?? "n/a"}${Number.isFinite(c.floorCpuPerRequest) ? ` (${c.floorCpuPerRequest})` : ""} |`),
    "",
    ...s.refused.map(
      (r) =>
        `Refusals${ab ? ` (${r.target})` : ""}: ${r.requests} requests of a key past its limit (statuses ${r.limitStatuses.join("/")}) and a disabled key (${r.disabledStatuses.join("/")}); early upstream calls cancelled after a refusal: ${r.cancelledEarly ?? "n/a"}.`,
    ),
    "",
  ];
  if (ab) {
    const [a, b] = [s.builds[0].label, s.builds[1].label];
    lines.push(`A/B (added ms over the floor measured at the same moments; ${a} minus ${b}: negative is faster):`, "", `| class | ${a} added p50 / p99 | ${b} added p50 / p99 | difference p50 / p99 | far round trips (mean) ${a} / ${b} | workerd CPU ms / request ${a} / ${b} |`, "|---|---|---|---|---|---|");
    for (const cls of [...new Set(s.classes.map((c) => c.class))]) {
      const x = s.classes.find((c) => c.class === cls && c.target === a);
      const y = s.classes.find((c) => c.class === cls && c.target === b);
      if (!x || !y) continue;
      lines.push(`| ${cls} | ${x.addedP50} / ${x.addedP99} | ${y.addedP50} / ${y.addedP99} | ${r1(x.addedP50 - y.addedP50)} / ${r1(x.addedP99 - y.addedP99)} | ${x.farMean} / ${y.farMean} | ${x.cpuPerRequest} / ${y.cpuPerRequest} |`);
    }
    lines.push("", `Time to the last byte (added ms over the floor's last byte; ${a} minus ${b}):`, "", `| class | ${a} added p50 / p99 | ${b} added p50 / p99 | difference p50 / p99 |`, "|---|---|---|---|");
    for (const cls of [...new Set(s.classes.map((c) => c.class))]) {
      const x = s.classes.find((c) => c.class === cls && c.target === a);
      const y = s.classes.find((c) => c.class === cls && c.target === b);
      if (!x || !y) continue;
      lines.push(`| ${cls} | ${x.lastAddedP50} / ${x.lastAddedP99} | ${y.lastAddedP50} / ${y.lastAddedP99} | ${r1(x.lastAddedP50 - y.lastAddedP50)} / ${r1(x.lastAddedP99 - y.lastAddedP99)} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

/** Runs the world classes (this build, and `base` when given), writes bench/results/world.{json,md} and prints the tables. */
export async function worldReport({ root, sb, base, baselineLabel, pt, adminToken, o, cpu, machine }) {
  const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  const builds = [{ label: "this build", ref: `working tree at ${head}`, sb }, ...(base ? [{ label: "baseline", ref: baselineLabel, sb: base }] : [])];
  const loadBefore = os.loadavg()[0].toFixed(2);
  const world = await runWorld({ sbs: builds, pt, adminToken, o, cpu });
  const summary = {
    date: new Date().toISOString(),
    machine,
    load: { before: loadBefore, after: os.loadavg()[0].toFixed(2) },
    config: o,
    builds: builds.map(({ label, ref }) => ({ label, ref })),
    ...world,
  };
  const md = renderWorld(summary);
  mkdirSync(path.join(root, "bench", "results"), { recursive: true });
  writeFileSync(path.join(root, "bench", "results", "world.json"), JSON.stringify(summary, null, 2) + "\n");
  writeFileSync(path.join(root, "bench", "results", "world.md"), md);
  console.log("\n" + md);
}

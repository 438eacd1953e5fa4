// @ts-check
/**
 * `npm run bench -- --peers`: Switchboard side by side with its peers in one runtime, ratios in
 * one run. Each Worker runs in its own workerd process (one Miniflare instance each, the runtime
 * `wrangler dev` uses) on fixed loopback ports, all calling one fake OpenAI upstream:
 *  - the floor: a Worker that only forwards the request to the upstream;
 *  - Portkey's open-source gateway (npm `@portkey-ai/gateway`, bench/peers/portkey.mjs), told the
 *    provider and the upstream by its headers (no auth, limits or logging: it has none);
 *  - Switchboard with every check on: a key made through the master API (IAM rules, a spend
 *    limit, organization rate limits far above the load), request logging, caching off, and no
 *    bench instrument configured (no `DEBUG_DO_CALLS`, no path tracing);
 *  - with --baseline-ref REF (or --baseline DIR), a second Switchboard built from REF, set up alike;
 *  - with --lean, the lean bound with Hono and zod (bench/lean/hono-zod.ts: key from memory, the
 *    chat schema, the upstream call, one log row batched into D1): what the mandated stack costs;
 *    and the durable bound (bench/lean/durable.ts): that plus what the product's rules demand of
 *    every request (a key object with the global spend cap under leases, each record durable in
 *    it before the answer, records through a queue into R2 and D1);
 *  - with --no-consumer-row, this build again with its queue consumers off (records wait in the
 *    local queue): the difference is what the log queue's consumer costs per request (its batch
 *    JS plus the D1 and R2 writes it makes, on the same thread under workerd).
 * Rounds are interleaved: c=1 latency in 100 ms turns across all targets, then c=32 throughput
 * per target in a rotating order. Reported per target: the added mean latency over the floor at
 * c=1 and the share of the floor's c=32 throughput (each the median of its per-round ratios), and
 * the workerd process's CPU per request at c=32 counted until the process is idle again, so the
 * request's share of background work (settlement, outbox, the log queue's consumer batches,
 * aggregates, lease renewals, metrics: all on that process's thread under workerd) is in it.
 * The machine's load average is printed beside every round: on a shared machine the absolute
 * numbers mean little, the ratios of one round somewhat more.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildPortkeyWorker } from "./peers/portkey.mjs";
import { DURABLE_BOUND, durableBoundStored } from "./lean-bound.mjs";
import { median, r2 } from "./measure.mjs";

/**
 * Ports of this mode, fixed so that parallel work on one machine keeps to its own: nine from a
 * base (8831 unless `--peers-ports BASE`) and the inspector (9321 unless `--inspector-port P`).
 */
export function peerPorts(base = 8831, inspector = 9321) {
  return { upstream: base, floor: base + 1, portkey: base + 2, switchboard: base + 3, baseline: base + 4, leanMinimal: base + 5, leanHonoZod: base + 6, noConsumer: base + 7, leanDurable: base + 8, inspector };
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * CPU of a process from `cpu0` until it is idle again (two 250 ms windows under 3 ms), at most
 * `maxMs`: the work a load left behind (queue batches, alarms) is counted with the load.
 */
export async function cpuUntilIdle(cpuMs, pid, maxMs) {
  const end = performance.now() + maxMs;
  let quiet = 0;
  let last = cpuMs(pid);
  while (performance.now() < end && quiet < 2) {
    await sleep(250);
    const now = cpuMs(pid);
    quiet = now - last < 3 ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

/**
 * @param {object} d what bench/run.mjs shares: its builders, seeding, load generators and clocks.
 */
export async function peersReport(d) {
  const { root, args, rounds, seconds, bundle, baselineDir, baselineLabel } = d;
  const num = (name, def) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
  const PEER_PORTS = peerPorts(num("peers-ports", 8831), num("inspector-port", 9321));
  // The upstream's own clock for the c=1 split (before the upstream call / after its answer).
  const upstreamTimes = { arrived: NaN, finished: NaN };
  const upstream = await d.startFakeUpstream({ port: PEER_PORTS.upstream, onTimes: (a, f) => { upstreamTimes.arrived = a; upstreamTimes.finished = f; } });
  const servers = [];
  try {
    const floor = await d.startPassThrough(upstream.url, PEER_PORTS.floor);
    servers.push(floor);
    let portkey = null;
    let portkeyWhyNot = null;
    try {
      const pk = await buildPortkeyWorker(root);
      portkey = await d.startMiniflare({
        name: "portkey",
        modules: true,
        scriptPath: pk.script,
        compatibilityDate: "2026-11-17",
        compatibilityFlags: ["nodejs_compat"],
        port: PEER_PORTS.portkey,
        host: "127.0.0.1",
      });
      portkey.version = pk.version;
      servers.push(portkey);
    } catch (err) {
      portkeyWhyNot = String(err instanceof Error ? err.message : err);
      console.log(`Portkey's gateway cannot run here: ${portkeyWhyNot}; floor vs Switchboard only`);
    }
    const sb = await d.startSwitchboard(bundle, upstream.url, { port: PEER_PORTS.switchboard, instruments: false, inspectorPort: args.includes("--cpu-profile") ? PEER_PORTS.inspector : undefined });
    servers.push(sb);
    const base = baselineDir
      ? await d.startSwitchboard({ outdir: baselineDir, entry: path.join(baselineDir, "index.js") }, upstream.url, { port: PEER_PORTS.baseline, instruments: false })
      : null;
    if (base) servers.push(base);
    const bare = args.includes("--no-consumer-row") ? await d.startSwitchboard(bundle, upstream.url, { port: PEER_PORTS.noConsumer, instruments: false, consumers: false }) : null;
    if (bare) servers.push(bare);
    const lean = args.includes("--lean") ? await d.startLeanBounds(root, upstream.url, d.startMiniflare, { minimal: PEER_PORTS.leanMinimal, honoZod: PEER_PORTS.leanHonoZod, durable: PEER_PORTS.leanDurable }) : null;
    if (lean) servers.push(...lean.servers);

    // --prompt-kb N: a coding agent's request of about N KiB instead of a one-line prompt.
    const promptKb = num("prompt-kb", 0);
    const body = promptKb > 0 ? d.agentBody("gpt-4o-mini", promptKb) : d.chatBody("gpt-4o-mini");
    const seedOpts = { liftTokenLimit: promptKb > 0 };
    const upstreamAuth = { authorization: "Bearer bench-operator-key-openai" };
    const targets = [
      { name: "floor", url: `${floor.url}/v1/chat/completions`, body, headers: upstreamAuth, pid: floor.pid },
      ...(portkey
        ? [{ name: `portkey ${portkey.version}`, url: `${portkey.url}/v1/chat/completions`, body, headers: { ...upstreamAuth, "x-portkey-provider": "openai", "x-portkey-custom-host": `${upstream.url}/openai` }, pid: portkey.pid }]
        : []),
      { name: "switchboard", url: `${sb.url}/v1/chat/completions`, body, headers: { authorization: `Bearer ${(await d.seed(sb, seedOpts)).key}` }, pid: sb.pid, drainMs: 6500 },
      ...(bare ? [{ name: "switchboard, queue consumers off", url: `${bare.url}/v1/chat/completions`, body, headers: { authorization: `Bearer ${(await d.seed(bare, seedOpts)).key}` }, pid: bare.pid, drainMs: 6500 }] : []),
      // The bounds built on Hono (the Hono + zod and the durable bound; not the no-framework one).
      // The durable bound leaves background work (alarms, queue batches): counted until idle, as Switchboard's.
      ...(lean ? lean.targets(body, upstreamAuth).filter((t) => t.name.includes("Hono")).map((t) => ({ ...t, drainMs: t.name === DURABLE_BOUND ? 6500 : 2500 })) : []),
      ...(base ? [{ name: `baseline ${baselineLabel}`, url: `${base.url}/v1/chat/completions`, body, headers: { authorization: `Bearer ${(await d.seed(base, seedOpts)).key}` }, pid: base.pid, drainMs: 6500 }] : []),
    ];
    if (args.includes("--cpu-profile")) {
      await d.cpuProfile(targets.find((t) => t.name === "switchboard"), { cannon: d.cannon, seconds, resultsDir: path.join(root, "bench", "results"), port: PEER_PORTS.inspector, bundleEntry: bundle.entry, cpuMs: d.cpuMs, drainMs: 6500 });
      return;
    }
    // Sanity and warm-up: every target answers 200 with the upstream's body.
    for (const t of targets) {
      const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
      const text = await res.text();
      if (res.status !== 200 || !text.includes("Hello from openai/gpt-4o-mini")) throw new Error(`${t.name}: HTTP ${res.status}: ${text.slice(0, 300)}`);
      await d.cannon({ ...t, connections: 8, seconds: 1 });
      await cpuUntilIdle(d.cpuMs, t.pid, t.drainMs ?? 2000);
    }
    const per = new Map(targets.map((t) => [t.name, { mean: [], p50: [], before: [], after: [], cpuC1: [], rps: [], cpu: [], cpuRun: [], addedMean: [], share: [], errors: 0 }]));
    const loads = [];
    for (let round = 0; round < rounds; round++) {
      loads.push(load());
      const c1cpu0 = targets.map((t) => d.cpuMs(t.pid));
      const lat = await d.interleavedLatency(targets, seconds, upstreamTimes);
      const c1cpu = await Promise.all(targets.map(async (t, i) => (await cpuUntilIdle(d.cpuMs, t.pid, 1000)) - c1cpu0[i]));
      targets.forEach((t, i) => {
        // CPU per request at c=1 counts the warm-up requests of each block too (they ran).
        per.get(t.name).cpuC1.push(c1cpu[i] / Math.max(1, lat[i].count + lat[i].blocks * 2));
        per.get(t.name).mean.push(lat[i].mean);
        per.get(t.name).before.push(lat[i].beforeUp);
        per.get(t.name).after.push(lat[i].afterUp);
        per.get(t.name).p50.push(lat[i].p50);
        per.get(t.name).errors += lat[i].errors;
      });
      // c=32 in a rotating order, so no target always follows the same one.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]);
      for (const t of order) {
        const cpu0 = d.cpuMs(t.pid);
        const thr = await d.cannon({ ...t, connections: 32, seconds });
        const cpuRun = d.cpuMs(t.pid) - cpu0;
        const cpuAll = (await cpuUntilIdle(d.cpuMs, t.pid, t.drainMs ?? 2000)) - cpu0;
        const r = per.get(t.name);
        r.rps.push(thr.requests.average);
        r.cpuRun.push(cpuRun / Math.max(1, thr.requests.total));
        r.cpu.push(cpuAll / Math.max(1, thr.requests.total));
        r.errors += thr.errors + thr.non2xx;
      }
      const f = per.get("floor");
      for (const t of targets) {
        const r = per.get(t.name);
        r.addedMean.push(r.mean[round] - f.mean[round]);
        r.share.push(r.rps[round] / f.rps[round]);
      }
      console.log(
        `round ${round + 1} (load ${loads[round]}): ` +
          targets.map((t) => { const r = per.get(t.name); return `${t.name} +${r2(r.addedMean[round])} ms, ${r2(r.share[round])} of floor, ${r2(r.cpu[round])} ms CPU/req`; }).join("; "),
      );
    }
    const summary = {
      date: new Date().toISOString(),
      machine: d.machine,
      loadAverages: [...loads, load()],
      config: { rounds, secondsPerRun: seconds },
      portkey: portkey ? { version: portkey.version } : { whyNot: portkeyWhyNot },
      targets: Object.fromEntries(
        targets.map((t) => {
          const r = per.get(t.name);
          return [t.name, {
            meanMsC1: r2(median(r.mean)),
            p50MsC1: r2(median(r.p50)),
            beforeUpstreamMsC1: r2(median(r.before)),
            afterUpstreamMsC1: r2(median(r.after)),
            cpuMsPerRequestC1: r2(median(r.cpuC1)),
            addedMeanMsC1: r2(median(r.addedMean)),
            addedMeanRangeMs: [r2(Math.min(...r.addedMean)), r2(Math.max(...r.addedMean))],
            rpsC32: r2(median(r.rps)),
            shareOfFloor: r2(median(r.share)),
            shareRange: [r2(Math.min(...r.share)), r2(Math.max(...r.share))],
            cpuMsPerRequest: r2(median(r.cpu)),
            cpuMsPerRequestDuringLoad: r2(median(r.cpuRun)),
            errors: r.errors,
          }];
        }),
      ),
    };
    const pk = portkey ? summary.targets[`portkey ${portkey.version}`] : null;
    const goalsOf = (t) => ({
      addedMeanWithinPortkeyPlusHalfMs: pk ? t.addedMeanMsC1 <= pk.addedMeanMsC1 + 0.5 : null,
      shareAtLeastPortkeyMinus005: pk ? t.shareOfFloor >= pk.shareOfFloor - 0.05 : null,
      cpuPerRequestAtMost15Ms: t.cpuMsPerRequest <= 1.5,
    });
    summary.goals = goalsOf(summary.targets.switchboard);
    // The same goals for the durable bound: which of them the product's rules leave reachable on this stack.
    const bound = summary.targets[DURABLE_BOUND];
    if (bound) summary.durableBoundGoals = goalsOf(bound);
    const verdicts = (g) =>
      `c=1 added mean <= Portkey's + 0.5 ms: ${g.addedMeanWithinPortkeyPlusHalfMs ? "met" : "MISSED"}; c=32 share >= Portkey's - 0.05: ${g.shareAtLeastPortkeyMinus005 ? "met" : "MISSED"}; CPU per request <= 1.5 ms: ${g.cpuPerRequestAtMost15Ms ? "met" : "MISSED"}.`;
    const md = [
      `Peers ${summary.date}: ${summary.machine.cores} cores (${summary.machine.cpu}), Node ${summary.machine.node}; ${rounds} interleaved rounds x ${seconds}s; request body ${(Buffer.byteLength(body) / 1024).toFixed(1)} KiB; load average (1/5/15 min) per round: ${summary.loadAverages.join(" | ")}`,
      "",
      "| target | mean ms (c=1) | added mean over floor (range) | c=1 p50 before / after the upstream | CPU ms/req at c=1 | req/s (c=32) | share of floor (range) | CPU ms/req incl. background (during load) | errors |",
      "|---|---|---|---|---|---|---|---|---|",
      ...Object.entries(summary.targets).map(([n, t]) =>
        `| ${n} | ${t.meanMsC1} | ${t.addedMeanMsC1} (${t.addedMeanRangeMs.join(" to ")}) | ${t.beforeUpstreamMsC1} / ${t.afterUpstreamMsC1} | ${t.cpuMsPerRequestC1} | ${t.rpsC32} | ${t.shareOfFloor} (${t.shareRange.join("-")}) | ${t.cpuMsPerRequest} (${t.cpuMsPerRequestDuringLoad}) | ${t.errors} |`),
      "",
      portkey ? `Goals: ${verdicts(summary.goals)}` : `Portkey not measured: ${portkeyWhyNot}.`,
      ...(portkey && summary.durableBoundGoals ? [`The same goals for the durable bound (what the product's rules leave on this stack): ${verdicts(summary.durableBoundGoals)}`] : []),
      "",
    ].join("\n");
    mkdirSync(path.join(root, "bench", "results"), { recursive: true });
    writeFileSync(path.join(root, "bench", "results", "peers.json"), JSON.stringify(summary, null, 2) + "\n");
    writeFileSync(path.join(root, "bench", "results", "peers.md"), md);
    console.log("\n" + md);
    console.log(`uptime: ${execFileSync("uptime", { encoding: "utf8" }).trim()}`);
    if (lean?.durable) {
      // What the durable bound stored: its rows reach D1 and R2 only through its key object's outbox and the queue.
      const stored = await durableBoundStored(lean.durable);
      console.log(`${DURABLE_BOUND}: ${stored.d1Rows} rows in D1, ${stored.r2Objects} objects in R2 (a last queue batch may still wait)`);
    }
  } finally {
    await Promise.allSettled([...servers.map((s) => s.mf.dispose()), upstream.close()]);
  }
}

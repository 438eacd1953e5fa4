// @ts-check
/**
 * `npm run bench`: measures what Switchboard adds on top of an upstream call.
 *
 * One run, everything on loopback:
 *  - builds the production bundle (`wrangler deploy --dry-run --minify`) and reports its size;
 *  - serves it with Miniflare's API (local D1 + Durable Objects + KV), migrations applied, an
 *    organization bootstrapped, and a key with an IAM rule and a spend limit, so auth, IAM,
 *    spend admission and request logging are all on;
 *  - serves a bare pass-through Worker in the same runtime (the floor), and a reference Worker that
 *    adds only one awaited Durable Object call and one durable write per request (what global
 *    metering costs in this runtime before any gateway logic);
 *  - starts the fake upstream (test/fake-upstream) that both call, and also calls it directly;
 *  - runs autocannon in interleaved rounds: latency at concurrency 1, throughput at 32;
 *  - measures stream time-to-first-chunk and per-chunk delay, workerd CPU per request and peak RSS.
 * Writes bench/results/latest.json and latest.md (gitignored; dated reference runs are committed
 * under bench/reference/) and prints the table with ratios to the floor.
 *
 * Flags: --quick (short runs), --rounds N, --seconds N; diagnostics: --profile, --cpu-profile
 * (PROFILE_CALLERS=fetch,Request names native functions whose callers to list), --latency-only
 * (c=1 p50 per target), --throughput-only (c=32 req/s and CPU per request), --baseline DIR (a second
 * Switchboard built from an earlier commit into DIR, measured side by side), --trace-stream (chunk
 * arrival times), --do-latency N (every budget Durable Object call of Switchboard, and the
 * reference's DO calls, wait N ms first: an object on another continent; reported as added p50
 * against the floor). Always reported: budget-object calls per request and per second for the hot
 * bench key (one key, all traffic), from Switchboard's `x-gateway-do-calls` (DEBUG_DO_CALLS=1).
 * --world: the world-latency mode instead (bench/world.mjs): latency on every binding of the request
 * path and the upstream's first token, TTFB added per traffic class (hot key, long-tail keys, cold
 * isolates), remote round trips before the first byte, early calls cancelled after refusals;
 * writes bench/results/world.json and world.md. With --baseline DIR or --baseline-ref REF (a git
 * ref, built here), every class also runs against that build, interleaved, and an A/B table is
 * printed; --baseline-ref works for the default bench too. --integrations: logBodies on/off and
 * OpenTelemetry export through a flaky collector instead (bench/integrations.mjs).
 * --world-failure: a provider that hangs before its headers or stalls mid-stream, with the default
 * timeouts, with and without hedging (bench/world-failure.mjs; bench/results/world-failure.md).
 * --world --regions: routing per caller continent (bench/world-regions.mjs): callers on NA, EU and
 * AS, a provider with endpoints in three regions behind a network latency matrix, one region failing
 * halfway, residency, weighted keys, CPU with a `provider` object; writes bench/results/world-regions.*.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { cpuProfile } from "./cpu-profile.mjs";
import { startLeanBounds } from "./lean-bound.mjs";
import { worldProfileTarget, worldReport } from "./world.mjs";
import { failureReport } from "./world-failure.mjs";
import { buildRef } from "./baseline.mjs";
import { cpuUntilIdle, peersReport } from "./peers.mjs";
import { stopsReport } from "./stops.mjs";
import { runRegions } from "./world-regions.mjs";
import { ADMIN_TOKEN, DO_LATENCY_MS, FAILURE, FAILURE_OPTS, REGIONS, REGIONS_OPTS, ROUNDS, SECONDS, STREAM_SAMPLES, WORLD, WORLD_OPTS, args, flag, root } from "./options.mjs";
import { baselineTargets, build, cpuMs, peakRssMiB, seed, startDoReference, startMiniflare, startPassThrough, startSwitchboard } from "./servers.mjs";
import { agentBody, cannon, chatBody, interleavedLatency, machineInfo, median, pct, r2, streamTiming } from "./measure.mjs";

async function main() {
  // The regions mode runs the gateway under wrangler dev (bench/world-regions.mjs), nothing below.
  if (REGIONS) return void (await runRegions({ root, adminToken: ADMIN_TOKEN, cannon, machine: machineInfo(), o: REGIONS_OPTS }));
  console.log(`bench: ${ROUNDS} round(s) x ${SECONDS}s per target; machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? "?"}, node ${process.version}`);
  const bundle = build({ minify: !flag("cpu-profile"), instruments: !flag("peers") && !flag("stops") });
  console.log(`bundle: ${(bundle.minifiedBytes / 1024).toFixed(1)} KiB minified, ${(bundle.gzipBytes / 1024).toFixed(1)} KiB gzip`);
  // --stops: the chat request cut short at one point after another, beside the full build (bench/stops.mjs).
  if (flag("stops")) return void (await stopsReport({ root, rounds: ROUNDS, seconds: SECONDS, bundle, startFakeUpstream, startPassThrough, startSwitchboard, seed, chatBody, cannon, cpuMs }));
  if (flag("peers")) {
    // --peers: floor, Portkey's gateway and Switchboard (and a --baseline-ref build), each in its
    // own workerd process on fixed ports, ratios in one run (bench/peers.mjs).
    const ref = args.includes("--baseline-ref") ? buildRef(root, args[args.indexOf("--baseline-ref") + 1], { instruments: false }) : null;
    const dir = ref ? ref.dir : args.includes("--baseline") ? path.resolve(args[args.indexOf("--baseline") + 1]) : null;
    await peersReport({
      root, args, rounds: ROUNDS, seconds: SECONDS, bundle, baselineDir: dir, baselineLabel: ref ? ref.label : dir, machine: machineInfo(),
      startFakeUpstream, startPassThrough, startMiniflare, startSwitchboard, startLeanBounds, seed, chatBody, agentBody, interleavedLatency, cannon, cpuMs, cpuProfile,
    });
    return;
  }
  const upstream = await startFakeUpstream({ port: 0 });
  const sb = await startSwitchboard(bundle, upstream.url);
  // --baseline DIR: a second Switchboard from an earlier build (`wrangler deploy --dry-run --minify
  // --outdir DIR`), measured side by side, for A/B comparisons that machine noise cannot blur.
  // --baseline-ref REF: the same, built from a git ref (buildRef).
  const baselineRef = args.includes("--baseline-ref") ? buildRef(root, args[args.indexOf("--baseline-ref") + 1]) : null;
  const baselineDir = baselineRef ? baselineRef.dir : args.includes("--baseline") ? path.resolve(args[args.indexOf("--baseline") + 1]) : null;
  const baselineLabel = baselineRef ? baselineRef.label : baselineDir;
  const base = baselineDir ? await startSwitchboard({ outdir: baselineDir, entry: path.join(baselineDir, "index.js") }, upstream.url) : null;
  const pt = await startPassThrough(upstream.url);
  if (FAILURE) {
    try {
      await failureReport({ root, sb, pt, adminToken: ADMIN_TOKEN, o: FAILURE_OPTS, machine: machineInfo() });
    } finally {
      await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
    }
    return;
  }
  if (WORLD) {
    try {
      if (flag("cpu-profile")) {
        // The hot key of the world mode under c=32 (streamed, the upstream's first token delayed).
        await cpuProfile(await worldProfileTarget({ sb, adminToken: ADMIN_TOKEN, o: WORLD_OPTS }), { cannon, seconds: SECONDS, resultsDir: path.join(root, "bench", "results") });
        return;
      }
      await worldReport({ root, sb, base, baselineLabel, pt, adminToken: ADMIN_TOKEN, o: WORLD_OPTS, cpu: (x) => cpuMs(x.pid), machine: machineInfo() });
    } finally {
      await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
      if (process.env.TMPDIR?.startsWith("/dev/shm/switchboard-bench-")) rmSync(process.env.TMPDIR, { recursive: true, force: true });
    }
    return;
  }
  const ref = await startDoReference(upstream.url);
  const lean = await startLeanBounds(root, upstream.url, startMiniflare);
  try {
    const { key } = await seed(sb);
    const auth = { authorization: `Bearer ${key}` };
    // The floor and the direct call carry the operator credential the fake upstream expects.
    const upstreamAuth = { authorization: "Bearer bench-operator-key-openai" };
    const targets = [
      { name: "upstream direct", url: `${upstream.url}/openai/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: null },
      { name: "pass-through floor", url: `${pt.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: pt.pid },
      { name: "floor + DO admit/settle (reference)", url: `${ref.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: ref.pid },
      ...lean.targets(chatBody("gpt-4o-mini"), upstreamAuth),
      { name: "switchboard canonical", url: `${sb.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: auth, pid: sb.pid },
      { name: "switchboard pinned", url: `${sb.url}/v1/chat/completions`, body: chatBody("openai/gpt-4o-mini"), headers: auth, pid: sb.pid },
      // The baseline gets the same two targets as Switchboard, so both processes carry the same load.
      ...(base ? await baselineTargets(base) : []),
    ];
    if (flag("trace-stream")) {
      // Arrival time of every chunk, floor vs Switchboard, to see where stream time goes.
      for (let i = 0; i < 3; i++) {
        for (const [name, url, h] of [["floor", `${pt.url}/v1/chat/completions`, upstreamAuth], ["switchboard", `${sb.url}/v1/chat/completions`, auth]]) {
          const t0 = performance.now();
          const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...h }, body: chatBody("gpt-4o-mini", true, "[[fake:drip=10]]") });
          const reader = res.body.getReader();
          const marks = [];
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            marks.push(`${r2(performance.now() - t0)}(${value.length})`);
          }
          console.log(`${name}: ${marks.join(" ")} end ${r2(performance.now() - t0)}`);
        }
      }
      return;
    }
    if (flag("cpu-profile")) {
      await cpuProfile(targets.find((t) => t.name === "switchboard canonical"), { cannon, seconds: SECONDS, resultsDir: path.join(root, "bench", "results") });
      return;
    }
    if (flag("latency-only")) {
      // Quick A/B loop while working on the hot path: sequential latency only, interleaved rounds.
      for (const t of targets) {
        const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
        const meta = (await res.json()).metadata;
        if (meta) console.log(`${t.name}: served by ${meta.used_provider}/${meta.used_model} after ${meta.routing.length} attempt(s)`);
      }
      const p50s = new Map(targets.map((t) => [t.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const lats = await interleavedLatency(targets, SECONDS);
        targets.forEach((t, i) => p50s.get(t.name).push(lats[i].p50));
      }
      const floorP50 = median(p50s.get("pass-through floor"));
      for (const [name, xs] of p50s) console.log(`${name}: p50 ${r2(median(xs))} ms (added ${r2(median(xs) - floorP50)})`);
      return;
    }
    if (flag("throughput-only")) {
      // Quick A/B loop for CPU work: c=32 throughput and workerd CPU per request, interleaved rounds.
      const runs = new Map(targets.filter((t) => t.pid).map((t) => [t.name, { rps: [], cpu: [] }]));
      for (const t of targets) if (t.pid) await cannon({ ...t, connections: 8, seconds: 1 });
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of targets) {
          if (!t.pid) continue;
          const cpu0 = cpuMs(t.pid);
          const thr = await cannon({ ...t, connections: 32, seconds: SECONDS });
          runs.get(t.name).rps.push(thr.requests.average);
          runs.get(t.name).cpu.push((cpuMs(t.pid) - cpu0) / Math.max(1, thr.requests.total));
        }
      }
      const floorRps = median(runs.get("pass-through floor").rps);
      for (const [name, r] of runs) console.log(`${name}: ${r2(median(r.rps))} req/s (${r2(median(r.rps) / floorRps)} of floor), ${r2(median(r.cpu))} ms CPU/req`);
      return;
    }
    if (flag("profile")) {
      // Sequential requests with the gateway's own overhead header, to locate slowness.
      for (const t of targets) {
        const times = [];
        const overheads = [];
        const heads = [];
        for (let i = 0; i < 40; i++) {
          const t0 = performance.now();
          const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
          heads.push(performance.now() - t0);
          await res.text();
          times.push(performance.now() - t0);
          overheads.push(Number(res.headers.get("x-gateway-overhead-ms") ?? NaN));
        }
        console.log(`${t.name}: headers p50 ${r2(median(heads))} ms, wall p50 ${r2(median(times))} ms, max ${r2(Math.max(...times))} ms, gateway overhead p50 ${median(overheads)} ms`);
      }
      return;
    }
    // sanity + warm-up
    for (const t of targets) {
      const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${t.name}: HTTP ${res.status}: ${body.slice(0, 400)}`);
      await cannon({ ...t, connections: 8, seconds: 1 });
    }

    const results = Object.fromEntries(targets.map((t) => [t.name, { p50: [], p99: [], rps: [], cpuPerReq: [], errors: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      const lats = await interleavedLatency(targets, SECONDS);
      for (const [i, t] of targets.entries()) {
        const lat = lats[i];
        const cpu0 = t.pid ? cpuMs(t.pid) : 0;
        const thr = await cannon({ ...t, connections: 32, seconds: SECONDS });
        // Counted until the process is idle again: the request's share of the background work it
        // left (settlement batches, the log queue's consumer, lease flushes) is in its CPU.
        const cpu1 = t.pid ? await cpuUntilIdle(cpuMs, t.pid, t.name.includes("switchboard") || t.name.includes("baseline") ? 6500 : 2000) : 0;
        const r = results[t.name];
        r.p50.push(lat.p50);
        r.p99.push(lat.p99);
        r.rps.push(thr.requests.average);
        if (t.pid) r.cpuPerReq.push((cpu1 - cpu0) / Math.max(1, thr.requests.total));
        r.errors += lat.errors + thr.errors + thr.non2xx;
        // What the errors were (autocannon: connection errors and timeouts, then non-2xx statuses).
        if (thr.errors || thr.non2xx) console.log(`${t.name}: ${thr.errors} connection errors/timeouts, statuses ${JSON.stringify(thr.statusCodeStats)} at c=32`);
        console.log(`round ${round + 1} (load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}) ${t.name}: p50 ${r2(lat.p50)} ms p99 ${r2(lat.p99)} ms (${lat.count} sequential, interleaved), ${thr.requests.average} req/s @32`);
      }
    }

    // streams: time to first chunk and per-chunk delay with a dripping upstream
    const drip = "[[fake:drip=10]]";
    const streamRuns = { floor: [], switchboard: [], messages: [] };
    // The same stream through the Anthropic Messages front door (re-encoded frame by frame).
    const messagesBody = JSON.stringify({ model: "gpt-4o-mini", max_tokens: 256, stream: true, messages: [{ role: "user", content: `Say hello to the benchmark ${drip}` }] });
    for (let i = 0; i < STREAM_SAMPLES; i++) {
      streamRuns.floor.push(await streamTiming(`${pt.url}/v1/chat/completions`, chatBody("gpt-4o-mini", true, drip), upstreamAuth));
      streamRuns.switchboard.push(await streamTiming(`${sb.url}/v1/chat/completions`, chatBody("gpt-4o-mini", true, drip), auth));
      streamRuns.messages.push(await streamTiming(`${sb.url}/v1/messages`, messagesBody, auth));
    }

    // Budget-object calls for the hot key: one c=32 run on one key, calls counted by the isolate.
    const sbTarget = targets.find((t) => t.name === "switchboard canonical");
    const doCalls = async () => {
      const res = await fetch(sbTarget.url, { method: "POST", headers: { "content-type": "application/json", ...sbTarget.headers }, body: sbTarget.body });
      await res.arrayBuffer();
      return Number(res.headers.get("x-gateway-do-calls") ?? NaN);
    };
    const callsBefore = await doCalls();
    const hot = await cannon({ ...sbTarget, connections: 32, seconds: SECONDS });
    const callsAfter = await doCalls();
    const hotCalls = callsAfter - callsBefore - 1;
    const doCallStats = {
      requests: hot.requests.total,
      calls: hotCalls,
      perRequest: Number((hotCalls / Math.max(1, hot.requests.total)).toPrecision(2)),
      perSecond: r2(hotCalls / SECONDS),
      doLatencyMs: DO_LATENCY_MS,
    };
    console.log(`hot key: ${hotCalls} budget-object calls for ${hot.requests.total} requests (${doCallStats.perRequest} per request, ${doCallStats.perSecond}/s for 2 objects, the key's and its organization's credits; a lease lives 1 s; one isolate)`);

    const floor = results["pass-through floor"];
    const summary = {
      date: new Date().toISOString(),
      machine: machineInfo(),
      // On a shared machine the load says how much the absolute numbers mean.
      loadAverage: os.loadavg().map((x) => r2(x)),
      config: { rounds: ROUNDS, secondsPerRun: SECONDS, streamSamples: STREAM_SAMPLES },
      bundle: { minifiedKiB: r2(bundle.minifiedBytes / 1024), gzipKiB: r2(bundle.gzipBytes / 1024) },
      targets: Object.fromEntries(
        Object.entries(results).map(([name, r]) => [
          name,
          {
            p50Ms: r2(median(r.p50)),
            p99Ms: r2(median(r.p99)),
            rps: r2(median(r.rps)),
            rpsRatioToFloor: r2(median(r.rps) / median(floor.rps)),
            addedP50Ms: r2(median(r.p50) - median(floor.p50)),
            addedP99Ms: r2(median(r.p99) - median(floor.p99)),
            cpuMsPerRequest: r.cpuPerReq.length ? r2(median(r.cpuPerReq)) : null,
            errors: r.errors,
          },
        ]),
      ),
      stream: {
        floorTtfcP50Ms: r2(median(streamRuns.floor.map((s) => s.ttfc))),
        switchboardTtfcP50Ms: r2(median(streamRuns.switchboard.map((s) => s.ttfc))),
        addedTtfcP50Ms: r2(median(streamRuns.switchboard.map((s) => s.ttfc)) - median(streamRuns.floor.map((s) => s.ttfc))),
        addedTtfcP99Ms: r2(pct(streamRuns.switchboard.map((s) => s.ttfc), 99) - pct(streamRuns.floor.map((s) => s.ttfc), 99)),
        chunksPerStream: median(streamRuns.switchboard.map((s) => s.chunks)),
        addedDelayPerChunkMs: r2(
          (median(streamRuns.switchboard.map((s) => s.total)) - median(streamRuns.floor.map((s) => s.total)) -
            (median(streamRuns.switchboard.map((s) => s.ttfc)) - median(streamRuns.floor.map((s) => s.ttfc)))) /
            Math.max(1, median(streamRuns.floor.map((s) => s.chunks))),
        ),
        /** `/v1/messages` over `/v1/chat/completions`, same upstream stream: what the dialect adds per upstream event. */
        messagesTtfcP50Ms: r2(median(streamRuns.messages.map((s) => s.ttfc))),
        messagesAddedDelayPerEventOverChatMs: r2(
          (median(streamRuns.messages.map((s) => s.total)) - median(streamRuns.switchboard.map((s) => s.total))) /
            Math.max(1, median(streamRuns.floor.map((s) => s.chunks))),
        ),
      },
      memory: { switchboardPeakRssMiB: sb.pid ? r2(peakRssMiB(sb.pid)) : null, floorPeakRssMiB: pt.pid ? r2(peakRssMiB(pt.pid)) : null },
      doCalls: doCallStats,
    };
    const sbc = summary.targets["switchboard canonical"];
    const refT = summary.targets["floor + DO admit/settle (reference)"];
    summary.againstReference = {
      rpsRatio: r2(sbc.rps / refT.rps),
      addedP50Ms: r2(sbc.p50Ms - refT.p50Ms),
      addedCpuMsPerRequest: sbc.cpuMsPerRequest !== null && refT.cpuMsPerRequest !== null ? r2(sbc.cpuMsPerRequest - refT.cpuMsPerRequest) : null,
    };
    // The request path's targets: added p50 <= 0.5 ms and p99 <= 3 ms at c=1, c=32 >= 80% of the floor.
    summary.targetsMet = {
      addedP50: sbc.addedP50Ms <= 0.5,
      addedP99: sbc.addedP99Ms <= 3,
      throughput: sbc.rpsRatioToFloor >= 0.8,
      streamChunkDelay: summary.stream.addedDelayPerChunkMs <= 1,
      messagesStreamEventDelay: summary.stream.messagesAddedDelayPerEventOverChatMs <= 1,
      bundleMinified: summary.bundle.minifiedKiB <= 1.2 * 1024,
      bundleGzip: summary.bundle.gzipKiB <= 350,
      // The process's CPU per request, background work included.
      cpuPerRequest: (sbc.cpuMsPerRequest ?? Infinity) <= 1.5,
      ...(DO_LATENCY_MS > 0 ? { addedP50WithDoLatency: sbc.addedP50Ms <= 1 } : {}),
    };
    const md = renderMarkdown(summary);
    mkdirSync(path.join(root, "bench", "results"), { recursive: true });
    writeFileSync(path.join(root, "bench", "results", "latest.json"), JSON.stringify(summary, null, 2) + "\n");
    writeFileSync(path.join(root, "bench", "results", "latest.md"), md);
    console.log("\n" + md);
  } finally {
    await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), ref.mf.dispose(), ...lean.servers.map((s) => s.mf.dispose()), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
    if (process.env.TMPDIR?.startsWith("/dev/shm/switchboard-bench-")) rmSync(process.env.TMPDIR, { recursive: true, force: true });
  }
}

/** V8 CPU profile of the Switchboard isolate during a c=32 run: top functions by self time. */
function renderMarkdown(s) {
  const rows = Object.entries(s.targets).map(([name, t]) =>
    `| ${name} | ${t.p50Ms} | ${t.p99Ms} | ${t.addedP50Ms} | ${t.addedP99Ms} | ${t.rps} | ${t.rpsRatioToFloor} | ${t.cpuMsPerRequest ?? "–"} | ${t.errors} |`,
  );
  const met = Object.entries(s.targetsMet).map(([k, v]) => `${k}: ${v ? "met" : "MISSED"}`).join(", ");
  return [
    `Benchmark ${s.date} — ${s.machine.cores} cores (${s.machine.cpu}), ${s.machine.memoryGiB} GiB, Node ${s.machine.node}; ${s.config.rounds} interleaved rounds x ${s.config.secondsPerRun}s; load average ${s.loadAverage.join(" / ")}`,
    "",
    "| target | p50 ms (c=1) | p99 ms (c=1) | added p50 | added p99 | req/s (c=32) | ratio to floor | workerd CPU ms/req (incl. background) | errors |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `Streams (upstream drips a chunk every 10 ms): TTFC p50 floor ${s.stream.floorTtfcP50Ms} ms, switchboard ${s.stream.switchboardTtfcP50Ms} ms (added p50 ${s.stream.addedTtfcP50Ms} ms, p99 ${s.stream.addedTtfcP99Ms} ms); added delay per chunk ${s.stream.addedDelayPerChunkMs} ms over ${s.stream.chunksPerStream} chunks. /v1/messages stream: TTFC p50 ${s.stream.messagesTtfcP50Ms} ms, added per event over chat ${s.stream.messagesAddedDelayPerEventOverChatMs} ms.`,
    `Against the reference (floor + one awaited DO round trip + one durable write, no gateway logic): reference keeps ${s.targets["floor + DO admit/settle (reference)"].rpsRatioToFloor} of the floor; Switchboard keeps ${s.againstReference.rpsRatio} of the reference, adds ${s.againstReference.addedP50Ms} ms p50 and ${s.againstReference.addedCpuMsPerRequest} ms CPU per request on top of it.`,
    `Hot key (one key, all traffic, one isolate, c=32): ${s.doCalls.calls} budget Durable Object calls for ${s.doCalls.requests} requests = ${s.doCalls.perRequest} per request (${s.doCalls.perSecond}/s over 2 objects, the key's and its organization's credits; a lease lives 1 s)${s.doCalls.doLatencyMs ? `; every DO call delayed ${s.doCalls.doLatencyMs} ms (--do-latency)` : ""}.`,
    `Bundle: ${s.bundle.minifiedKiB} KiB minified, ${s.bundle.gzipKiB} KiB gzip. Peak RSS: switchboard workerd ${s.memory.switchboardPeakRssMiB} MiB, floor ${s.memory.floorPeakRssMiB} MiB.`,
    `Targets: ${met}.`,
    "",
  ].join("\n");
}

// --integrations: bodies and OpenTelemetry export instead (bench/integrations.mjs reads its own flags).
if (flag("integrations")) await import("./integrations.mjs");
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });

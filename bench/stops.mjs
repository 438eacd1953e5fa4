// @ts-check
/**
 * `npm run bench -- --stops`: the chat request cut short at one point after another (the stops of
 * bench/ablate.mjs, each a build answering a canned completion there) beside the full build and
 * the floor, each in its own workerd process: the workerd CPU per request at c=1 (requests one
 * after another) and at c=32, interleaved rounds. The difference from one stop to the next is what
 * that stretch of the path costs, the runtime's part included (which a CPU profile misplaces).
 */
import { buildAblation, STOPS } from "./ablate.mjs";
import { cpuUntilIdle } from "./peers.mjs";
import { median } from "./measure.mjs";

/** @param {any} d what bench/run.mjs shares: its builders, seeding, load generators and clocks. */
export async function stopsReport(d) {
  const { root, rounds, seconds, bundle } = d;
  const upstream = await d.startFakeUpstream({ port: 0 });
  const servers = [];
  try {
    const floor = await d.startPassThrough(upstream.url);
    servers.push(floor);
    const body = d.chatBody("gpt-4o-mini");
    const targets = [{ name: "floor", label: "forwarding to the upstream", url: `${floor.url}/v1/chat/completions`, headers: { authorization: "Bearer bench-operator-key-openai" }, pid: floor.pid, body }];
    // Last, the whole request without its settlement (bench/ablate.mjs `settlement`): the record,
    // its durable write, the log queue and its consumer are the difference to the full build.
    const builds = [
      ...Object.entries(STOPS).map(([name, s]) => ({ name, label: s.what.replace(/^answers (at|once) /, ""), keyless: s.keyless === true })),
      { name: "settlement", label: "the whole request, its record never settled or stored", keyless: false },
      { name: "full", label: "the whole request", keyless: false },
    ];
    for (const { name, label, keyless } of builds) {
      const outdir = name === "full" ? bundle.outdir : buildAblation(root, name);
      const sb = await d.startSwitchboard({ outdir, entry: `${outdir}/index.js` }, upstream.url, { instruments: false });
      servers.push(sb);
      const key = keyless ? "sk-unused" : (await d.seed(sb)).key;
      targets.push({ name, label, url: `${sb.url}/v1/chat/completions`, headers: { authorization: `Bearer ${key}` }, pid: sb.pid, body });
    }
    /** c=1: `n` requests one after another; CPU counted until the process is idle again. */
    const sequential = async (t, n) => {
      const cpu0 = d.cpuMs(t.pid);
      for (let i = 0; i < n; i++) {
        const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${t.name}: HTTP ${res.status}`);
      }
      return ((await cpuUntilIdle(d.cpuMs, t.pid, 4000)) - cpu0) / n;
    };
    for (const t of targets) {
      await sequential(t, 100);
      await d.cannon({ ...t, connections: 8, seconds: 1 });
    }
    const per = new Map(targets.map((t) => [t.name, { c1: [], c32: [], rps: [] }]));
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) per.get(t.name).c1.push(await sequential(t, 300));
      for (const t of targets) {
        const cpu0 = d.cpuMs(t.pid);
        const thr = await d.cannon({ ...t, connections: 32, seconds });
        const r = per.get(t.name);
        r.c32.push(((await cpuUntilIdle(d.cpuMs, t.pid, 6500)) - cpu0) / Math.max(1, thr.requests.total));
        r.rps.push(thr.requests.average);
      }
      console.log(`round ${round + 1}: ${targets.map((t) => `${t.name} ${per.get(t.name).c32[round].toFixed(2)} ms`).join("; ")} (c=32 CPU/request)`);
    }
    console.log("| build | what it answers after | c=1 CPU ms/request | c=32 CPU ms/request | c=32 req/s |\n|---|---|---|---|---|");
    for (const t of targets) {
      const r = per.get(t.name);
      console.log(`| ${t.name} | ${t.label} | ${median(r.c1).toFixed(2)} | ${median(r.c32).toFixed(2)} | ${median(r.rps).toFixed(0)} |`);
    }
  } finally {
    await Promise.allSettled([...servers.map((s) => s.mf.dispose()), upstream.close()]);
  }
}

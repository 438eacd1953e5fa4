// @ts-check
/**
 * The bench's measurements: latency at concurrency 1 in interleaved blocks, throughput with
 * autocannon, stream timing, and the statistics the reports use.
 */
import os from "node:os";
import autocannon from "autocannon";
import { DO_LATENCY_MS } from "./options.mjs";

// ---------- measurements ----------
// Streams ask for the usage chunk, as Switchboard always does upstream: floor and gateway then make
// the upstream produce the same stream, and the difference is what the gateway adds.
export const chatBody = (model, stream = false, extra = "") =>
  JSON.stringify({
    model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    temperature: 0.7,
    messages: [{ role: "user", content: `Say hello to the benchmark ${extra}`.trim() }],
  });

/**
 * A coding agent's request of about `kb` KiB (`--peers --prompt-kb N`): a system prompt, two tools
 * and turns of code, as Claude Code or Codex send them (50-200 KiB is common). What every gateway
 * does per byte (reading, parsing and validating the body, bounding the prompt, building the
 * upstream body) shows at this size, where the one-line prompt of `chatBody` hides it.
 */
export function agentBody(model, kb) {
  const code = (i) => `// file src/module-${i}.ts\nexport function handler${i}(input: string): number {\n  const parts = input.split(",").map((p) => p.trim());\n  return parts.filter((p) => p.length > ${i % 7}).length;\n}\n`;
  const turns = [];
  let size = 0;
  for (let i = 0; size < kb * 1024; i++) {
    const text = Array.from({ length: 8 }, (_, j) => code(i * 8 + j)).join("\n");
    turns.push({ role: "user", content: `Here is the next file; explain what it does and fix the bug.\n\n${text}` }, { role: "assistant", content: `The handler counts the parts longer than ${i % 7} characters. ${text.slice(0, 200)}` });
    size += text.length + 300;
  }
  const tool = (name) => ({ type: "function", function: { name, description: `The ${name} tool of the coding agent.`, parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path"] } } });
  return JSON.stringify({
    model,
    temperature: 0.7,
    messages: [{ role: "system", content: "You are a coding agent. Answer briefly." }, ...turns, { role: "user", content: "Say hello to the benchmark" }],
    tools: [tool("read_file"), tool("write_file")],
  });
}

/**
 * Latency at concurrency 1, timed with sub-millisecond resolution. The targets take turns in short
 * blocks of back-to-back requests (BLOCK_MS each, the first requests of a block dropped as warm-up),
 * so every target is measured under the same machine conditions: on a shared VM these drift by
 * more than the differences we look for when each target runs for seconds on its own.
 * `seconds` is per target.
 */
// Blocks must hold a few requests beyond the warm-up, also when every DO call is delayed.
const BLOCK_MS = Math.max(100, 10 * DO_LATENCY_MS);
const BLOCK_WARMUP = 2;
/**
 * With `upstreamTimes` (the fake upstream's last `onTimes`, same clock), each target also gets the
 * median time before its request reached the upstream (`beforeUp`: the client's send to the
 * upstream's arrival) and after the upstream finished its answer (`afterUp`: to the client's last
 * byte), so an added latency splits into the part before the upstream call and the part after it.
 */
export async function interleavedLatency(targets, seconds, upstreamTimes = null) {
  const samples = targets.map(() => ({ times: [], before: [], after: [], errors: 0, blocks: 0 }));
  const end = performance.now() + seconds * 1000 * targets.length;
  while (performance.now() < end) {
    for (let i = 0; i < targets.length; i++) {
      const { url, body, headers } = targets[i];
      const blockEnd = performance.now() + BLOCK_MS;
      samples[i].blocks++;
      for (let n = 0; performance.now() < blockEnd; n++) {
        if (upstreamTimes) upstreamTimes.arrived = upstreamTimes.finished = NaN;
        const t0 = performance.now();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
        await res.arrayBuffer();
        const t1 = performance.now();
        if (n >= BLOCK_WARMUP) {
          samples[i].times.push(t1 - t0);
          if (upstreamTimes && upstreamTimes.arrived >= t0 && upstreamTimes.finished <= t1) {
            samples[i].before.push(upstreamTimes.arrived - t0);
            samples[i].after.push(t1 - upstreamTimes.finished);
          }
        }
        if (res.status !== 200) {
          samples[i].errors++;
          console.log(`${targets[i].name}: HTTP ${res.status} at c=1`);
        }
      }
    }
  }
  return samples.map(({ times, before, after, errors, blocks }) => ({
    mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length), p50: pct(times, 50), p99: pct(times, 99), count: times.length, errors, blocks,
    beforeUp: before.length ? median(before) : NaN, afterUp: after.length ? median(after) : NaN,
  }));
}

export function cannon({ url, body, headers, connections, seconds }) {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: "POST", body, headers: { "content-type": "application/json", ...headers }, connections, duration: seconds, pipelining: 1 }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

export async function streamTiming(url, body, headers) {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  if (!res.ok || !res.body) throw new Error(`stream failed: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  let first = NaN;
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value && value.length) {
      chunks++;
      if (Number.isNaN(first)) first = performance.now() - t0;
    }
  }
  return { ttfc: first, total: performance.now() - t0, chunks };
}

export const median = (xs) => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
export const r2 = (x) => Math.round(x * 100) / 100;
export const machineInfo = () => ({ cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version });

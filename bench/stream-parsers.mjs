#!/usr/bin/env node
// @ts-check
/**
 * CPU cost of the stream parsers on one large frame, without I/O: bundles the SSE parser
 * (src/providers/sse.ts), the dialects' chat SSE re-encoder (src/dialects/chat-sse.ts) and the
 * Bedrock event-stream reader (src/providers/bedrock/eventstream.ts) with esbuild, feeds each a
 * 3 MB frame (a base64 image in one `data:` line, or one event-stream message) in 8 KB chunks
 * and prints the median CPU time of 5 runs. Target: under 50 ms each (exit 1 above it).
 * `node bench/stream-parsers.mjs`
 */
import { build } from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const TARGET_MS = 50;
const CHUNK = 8 * 1024;
const SIZE = 3 * 1024 * 1024;

const root = resolve(import.meta.dirname, "..");
mkdirSync(join(root, "node_modules", ".cache"), { recursive: true });
const dir = mkdtempSync(join(root, "node_modules", ".cache", "swb-parsers-"));
const entry = join(dir, "entry.ts");
writeFileSync(
  entry,
  `export { SseParser } from "${root}/src/providers/sse";
export { reencodeChatSse } from "${root}/src/dialects/chat-sse";
export { readEventStream } from "${root}/src/providers/bedrock/eventstream";
export { encodeEventStreamMessage } from "${root}/src/providers/test-target";`,
);
const out = join(dir, "parsers.mjs");
try {
  await build({ entryPoints: [entry], bundle: true, format: "esm", platform: "neutral", outfile: out, logLevel: "error", external: ["cloudflare:*"] });
  const { SseParser, reencodeChatSse, readEventStream, encodeEventStreamMessage } = await import(out);

  /** @param {string | Uint8Array} whole */
  const chunked = (whole) => {
    const parts = [];
    for (let i = 0; i < whole.length; i += CHUNK) parts.push(whole.slice(i, i + CHUNK));
    return parts;
  };
  /** @param {Array<string | Uint8Array>} parts */
  const streamOf = (parts) => {
    const enc = new TextEncoder();
    return new ReadableStream({ start(c) { for (const p of parts) c.enqueue(typeof p === "string" ? enc.encode(p) : p); c.close(); } });
  };
  /** Median CPU ms (user + system) of 5 runs after one warm-up. @param {() => unknown} run */
  const cpu = async (run) => {
    await run();
    const times = [];
    for (let i = 0; i < 5; i++) {
      const t0 = process.cpuUsage();
      await run();
      const d = process.cpuUsage(t0);
      times.push((d.user + d.system) / 1000);
    }
    return times.sort((a, b) => a - b)[2] ?? 0;
  };

  const image = "A".repeat(SIZE);
  const sse = chunked(`data: {"choices":[{"index":0,"delta":{"images":[{"image_url":{"url":"data:image/png;base64,${image}"}}]}}]}\n\n`);
  const event = chunked(encodeEventStreamMessage({ ":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event" }, JSON.stringify({ delta: { text: image } })));
  const noop = { start: () => "", chunk: () => "x", keepAlive: () => "", error: () => "", done: () => "" };

  const rows = [
    ["SSE parser, one 3 MB data line", await cpu(() => { const p = new SseParser(); for (const s of sse) p.push(s); return p.end(); })],
    ["chat SSE re-encoder (dialects), one 3 MB frame", await cpu(async () => { const r = reencodeChatSse(streamOf(sse), noop).getReader(); while (!(await r.read()).done); })],
    ["Bedrock event stream, one 3 MB message", await cpu(async () => { for await (const _ of readEventStream(streamOf(event))) void _; })],
  ];
  let failed = false;
  console.log(`| parser (8 KB chunks) | CPU ms (median of 5) | target |\n|---|---|---|`);
  for (const [name, ms] of rows) {
    const ok = Number(ms) <= TARGET_MS;
    failed ||= !ok;
    console.log(`| ${name} | ${Number(ms).toFixed(1)} | ${ok ? "ok" : "OVER"} < ${TARGET_MS} |`);
  }
  process.exitCode = failed ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}

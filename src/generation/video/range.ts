/** HTTP `Range` requests against a video of known size (the content proxy, src/generation/videos.ts). */

export interface ByteRange {
  start: number;
  end: number;
}

/** Parses a single `bytes=` range against a known size; null = ignore the header, "unsatisfiable" = 416. */
export function parseRange(header: string, size: number): ByteRange | "unsatisfiable" | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (!m[1] && !m[2])) return null;
  if (!m[1]) {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

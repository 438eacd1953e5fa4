/** `data:<mime>;base64,<data>` URLs (images, files) in and out of provider formats. */

export interface DataUrl {
  mimeType: string;
  data: string;
}

export function parseDataUrl(url: string): DataUrl | undefined {
  const m = /^data:([^;,]+)?(?:;[^;,=]+=[^;,]*)*;base64,(.*)$/s.exec(url);
  if (!m) return undefined;
  return { mimeType: m[1] ?? "application/octet-stream", data: m[2] ?? "" };
}

export const toDataUrl = (mimeType: string, data: string): string => `data:${mimeType};base64,${data}`;

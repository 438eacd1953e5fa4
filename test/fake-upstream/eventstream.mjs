// @ts-check
/**
 * Encoder for AWS `application/vnd.amazon.eventstream` messages (the fake Bedrock upstream's
 * ConverseStream framing): prelude (total length, headers length, prelude CRC32), headers,
 * payload, message CRC32. Only string headers (type 7) are produced, as Bedrock does.
 */

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** @param {Uint8Array} bytes */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = /** @type {number} */ (CRC_TABLE[(c ^ /** @type {number} */ (bytes[i])) & 0xff]) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * @param {Record<string, string>} headers
 * @param {Uint8Array | string} payload
 * @returns {Buffer}
 */
export function encodeMessage(headers, payload) {
  const headerBufs = Object.entries(headers).map(([name, value]) => {
    const n = Buffer.from(name, "utf8");
    const v = Buffer.from(value, "utf8");
    const b = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    b.writeUInt8(n.length, 0);
    n.copy(b, 1);
    b.writeUInt8(7, 1 + n.length);
    b.writeUInt16BE(v.length, 2 + n.length);
    v.copy(b, 4 + n.length);
    return b;
  });
  const h = Buffer.concat(headerBufs);
  const p = typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload);
  const total = 12 + h.length + p.length + 4;
  const msg = Buffer.alloc(total);
  msg.writeUInt32BE(total, 0);
  msg.writeUInt32BE(h.length, 4);
  msg.writeUInt32BE(crc32(msg.subarray(0, 8)), 8);
  h.copy(msg, 12);
  p.copy(msg, 12 + h.length);
  msg.writeUInt32BE(crc32(msg.subarray(0, total - 4)), total - 4);
  return msg;
}

/** An event message as Bedrock sends it. @param {string} eventType @param {unknown} body */
export const eventMessage = (eventType, body) =>
  encodeMessage({ ":event-type": eventType, ":content-type": "application/json", ":message-type": "event" }, JSON.stringify(body));

/** An exception message. @param {string} exceptionType @param {string} message */
export const exceptionMessage = (exceptionType, message) =>
  encodeMessage({ ":exception-type": exceptionType, ":content-type": "application/json", ":message-type": "exception" }, JSON.stringify({ message }));

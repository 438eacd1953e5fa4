import { describe, expect, it } from "vitest";
import { bytesStream, collectEvents, encodeEventStreamMessage as encode } from "../test-target";
import { crc32, decodeMessage, EventStreamError, readEventStream } from "./eventstream";

const hex = (s: string) => new Uint8Array(s.match(/../g)!.map((b) => parseInt(b, 16)));
// Reference vector: one message, header content-type=application/json, payload {'foo':'bar'}.
const VECTOR = hex("0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1");

describe("eventstream decoder", () => {
  it("computes the standard CRC-32", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
  });

  it("decodes the reference vector", () => {
    const m = decodeMessage(VECTOR);
    expect(m.headers).toEqual({ "content-type": "application/json" });
    expect(new TextDecoder().decode(m.payload)).toBe("{'foo':'bar'}");
  });

  it("rejects corrupted prelude or message CRCs", () => {
    const badMsg = VECTOR.slice();
    badMsg[badMsg.length - 5] = (badMsg[badMsg.length - 5] ?? 0) ^ 1; // payload byte
    expect(() => decodeMessage(badMsg)).toThrow(/message CRC/);
    const badPrelude = VECTOR.slice();
    badPrelude[3] = (badPrelude[3] ?? 0) ^ 1;
    expect(() => decodeMessage(badPrelude)).toThrow(EventStreamError);
  });

  it("reassembles messages split at every byte boundary", async () => {
    const a = encode({ ":event-type": "messageStart", ":message-type": "event" }, '{"role":"assistant"}');
    const b = encode({ ":event-type": "contentBlockDelta", ":message-type": "event" }, '{"contentBlockIndex":0,"delta":{"text":"hé"}}');
    const all = new Uint8Array([...a, ...b]);
    for (let i = 1; i < all.length; i += 7) {
      const msgs = await collectEvents(readEventStream(bytesStream([all.slice(0, i), all.slice(i)])));
      expect(msgs.map((m) => m.headers[":event-type"])).toEqual(["messageStart", "contentBlockDelta"]);
      expect(new TextDecoder().decode(msgs[1]!.payload)).toBe('{"contentBlockIndex":0,"delta":{"text":"hé"}}');
    }
  });

  it("fails on a stream that ends inside a message", async () => {
    await expect(collectEvents(readEventStream(bytesStream([VECTOR.slice(0, 30)])))).rejects.toThrow(/ended inside/);
  });
});

// The gateway's view of a proxied WebSocket's server side: it must know where frames end, in any
// chunking, so that its own error and close frames never land inside an upstream frame.
import { describe, expect, it } from "vitest";
import { closeFrame, ServerStream, serverFrame } from "../../regional/gateway/ws-frames.ts";

const HEAD = new TextEncoder().encode("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
const text = (s: string) => serverFrame(0x1, new TextEncoder().encode(s));
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

describe("ServerStream", () => {
  it("follows the head and frames of every size, whatever the chunking", () => {
    const frames = [text("a"), text("x".repeat(300)), serverFrame(0x1, new Uint8Array(70_000)), text("")];
    const all = concat(HEAD, ...frames);
    const ends = new Set<number>();
    let o = HEAD.length;
    ends.add(o);
    for (const f of frames) {
      o += f.length;
      ends.add(o);
    }
    for (const size of [1, 2, 3, 7, 64, 1000, all.length]) {
      const s = new ServerStream();
      for (let i = 0; i < all.length; i += size) {
        s.feed(all.subarray(i, i + size));
        const end = Math.min(i + size, all.length);
        expect(s.atBoundary, `chunk ${size} at ${end}`).toBe(ends.has(end));
      }
      expect(s.closed).toBe(false);
    }
  });

  it("notices the upstream's own close frame", () => {
    const s = new ServerStream();
    s.feed(concat(HEAD, text("bye"), closeFrame(1000, "done")));
    expect(s.closed).toBe(true);
    expect(s.atBoundary).toBe(true);
  });

  it("a refusal or garbage is no WebSocket: never at a boundary, never throws", () => {
    const refused = new ServerStream();
    refused.feed(new TextEncoder().encode("HTTP/1.1 503 at_capacity\r\nContent-Length: 0\r\n\r\n"));
    expect(refused.upgraded).toBe(false);
    expect(refused.broken).toBe(true);
    expect(refused.atBoundary).toBe(false);
    const junk = new ServerStream();
    const rnd = new Uint8Array(40_000).map((_, i) => (i * 7919) & 0xff);
    junk.feed(rnd);
    expect(junk.atBoundary).toBe(false);
  });

  it("writes frames a WebSocket client reads: close code and reason", () => {
    const c = closeFrame(1011, "transceiver_failed");
    expect(c[0]).toBe(0x88);
    expect(c[1]).toBe(2 + "transceiver_failed".length);
    expect((c[2]! << 8) | c[3]!).toBe(1011);
    const big = serverFrame(0x1, new Uint8Array(70_000));
    expect(big[1]).toBe(127);
  });
});

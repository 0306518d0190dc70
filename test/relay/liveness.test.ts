// Transceiver liveness at the relay, in virtual time: silence and a refused port mark a
// transceiver down (the engines then see no such transceiver), anything heard brings it back.
import { describe, expect, it } from "vitest";
import {
  DOWN_AFTER_MS,
  Liveness,
  LiveRegistry,
  PING_EVERY_MS,
  pingFrame,
} from "../../regional/relay/registry/liveness.ts";
import { MemoryRegistry } from "../../regional/relay/registry/registry.ts";
import { decodeFrameHeader, FrameType, newFrameHeader } from "../../shared/backbone/frame.ts";

describe("Liveness", () => {
  it("pings every PING_EVERY_MS and marks a silent transceiver down after DOWN_AFTER_MS", () => {
    const l = new Liveness();
    const pinged: number[] = [];
    const ping = (id: number) => pinged.push(id);
    expect(l.tick(0, [1, 2], ping)).toEqual([]);
    expect(pinged).toEqual([1, 2]);
    for (let t = 250; t <= DOWN_AFTER_MS; t += 250) {
      l.heard(2, t);
      expect(l.tick(t, [1, 2], ping)).toEqual([]);
    }
    expect(pinged.filter((id) => id === 1).length).toBe(Math.floor(DOWN_AFTER_MS / PING_EVERY_MS) + 1);
    const changes = l.tick(DOWN_AFTER_MS + 250, [1, 2], ping);
    expect(changes).toEqual([{ transceiverId: 1, up: false, reason: "silent" }]);
    expect(l.isDown(1)).toBe(true);
    expect(l.isDown(2)).toBe(false);
    // Reported once, not on every tick.
    expect(l.tick(DOWN_AFTER_MS + 500, [1, 2], ping)).toEqual([]);
    l.heard(1, DOWN_AFTER_MS + 600);
    expect(l.isDown(1)).toBe(false);
    expect(l.tick(DOWN_AFTER_MS + 750, [1, 2], ping)).toEqual([
      { transceiverId: 1, up: true, reason: "heard" },
    ]);
  });

  it("a refused port is down at once; a forgotten id starts afresh", () => {
    const l = new Liveness();
    l.tick(0, [7], () => {});
    l.refused(7);
    l.refused(7);
    expect(l.isDown(7)).toBe(true);
    expect(l.tick(10, [7], () => {})).toEqual([
      { transceiverId: 7, up: false, reason: "connection_refused" },
    ]);
    l.forget(7);
    expect(l.isDown(7)).toBe(false);
    // First sight again: a fresh grace period, not the old silence.
    expect(l.tick(100_000, [7], () => {})).toEqual([]);
    expect(l.isDown(7)).toBe(false);
  });

  it("the engines' view hides a transceiver that is down", async () => {
    const inner = new MemoryRegistry(1, new Map([[3, "127.0.0.1:6103"]]));
    const l = new Liveness();
    const reg = new LiveRegistry(inner, l);
    expect(reg.has(3)).toBe(true);
    expect(reg.get(3)).toBe("127.0.0.1:6103");
    l.refused(3);
    expect(reg.has(3)).toBe(false);
    expect(reg.get(3)).toBeUndefined();
    // Sockets stay open to it (entries), so its pongs can bring it back.
    expect([...reg.entries().keys()]).toEqual([3]);
    l.heard(3, 1);
    expect(reg.has(3)).toBe(true);
    await reg.close();
  });

  it("the ping is a valid backbone ping frame for that transceiver", () => {
    const f = pingFrame(2, 9);
    const h = newFrameHeader();
    expect(decodeFrameHeader(f, f.length, h)).toBe("ok");
    expect(h).toMatchObject({ type: FrameType.ping, clusterId: 2, transceiverId: 9 });
  });
});

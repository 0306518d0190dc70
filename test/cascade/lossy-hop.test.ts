// The repair measurement's lossy hop on plain sockets: frames shaped like conference media cross
// it both ways; the tap counts what the seeded model lost (about the configured 5 %) and what came
// out, one way delay later; no frame comes out twice.
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/wait.ts";
import { hopFronts, type LossyHop, startLossyHop, TO_HUB, TO_LEAF } from "./lossy-hop.ts";

const sockets: Socket[] = [];
let hop: LossyHop | null = null;
afterEach(() => {
  hop?.close();
  hop = null;
  for (const s of sockets.splice(0)) s.close();
});

const bind = async (): Promise<Socket> => {
  // Large buffers and paced sends: the kernel must not drop what the emulator is to count.
  const s = createSocket({ type: "udp4", recvBufferSize: 1 << 21 });
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  sockets.push(s);
  return s;
};

function media(slot: number, seq: number): Buffer {
  const b = Buffer.alloc(20 + 12 + 3 + 16);
  b[0] = 0x47;
  b[1] = 0x16;
  b[2] = 1;
  b.writeUInt16BE(slot, 12);
  b.writeUInt16BE(seq, 24);
  return b;
}

const total = (h: LossyHop, name: string) => h.linkem.stats().routes[name]!.up.delivered;

describe("lossy hop", () => {
  it("loses about the configured share each way, delays the rest, and the tap sees it all", async () => {
    const [hub, leaf] = [await bind(), await bind()];
    const got = { hub: 0, leaf: 0 };
    hub.on("message", () => got.hub++);
    leaf.on("message", () => got.leaf++);
    const fronts = await hopFronts();
    hop = await startLossyHop(
      { lossPct: 5, delayMs: 10, seed: 7 },
      { hub: hub.address().port, leaf: leaf.address().port, ...fronts },
    );
    const N = 2000;
    for (let i = 0; i < N; i++) {
      leaf.send(media(2, i), fronts.hubFront, "127.0.0.1");
      hub.send(media(0, i), fronts.leafFront, "127.0.0.1");
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 2));
    }
    const h = hop;
    const settled = (name: string) => {
      const l = h.linkem.stats().routes[name]!.up;
      return l.offered === N && l.delivered + l.lost + l.queueFull === N;
    };
    await until(
      () =>
        settled(TO_HUB) && settled(TO_LEAF) && got.hub + got.leaf === total(h, TO_HUB) + total(h, TO_LEAF),
      "every frame offered, and the survivors delivered",
    );
    for (const f of [h.meter.figures(TO_HUB, "up", 10), h.meter.figures(TO_LEAF, "up", 10)]) {
      expect(f.linkLossPct).toBeGreaterThan(3);
      expect(f.linkLossPct).toBeLessThan(7);
      expect(f.lostFarEnd).toBe(f.lostOnLink);
      expect(f.repaired).toBe(0);
      expect(f.duplicatesDelivered).toBe(0);
    }
  });
});

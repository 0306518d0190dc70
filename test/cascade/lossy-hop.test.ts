// The repair measurement's lossy hop on plain sockets: frames shaped like conference media cross
// it both ways; the far side sees the leaf at LEAF_VIA with the leaf's own port (what the leaf
// advertises) and the hub at the front; the tap counts what the seeded model lost (about the
// configured 5 %) and what came out; no frame comes out twice.
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/wait.ts";
import { HOP_ROUTE, hopFront, LEAF_VIA, type LossyHop, startLossyHop } from "./lossy-hop.ts";

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

const pace = () => new Promise((r) => setTimeout(r, 2));

describe("lossy hop", () => {
  it("loses about the configured share each way, keeps both sides' addresses, and the tap sees it all", async () => {
    const [hub, leaf] = [await bind(), await bind()];
    const froms = { hub: new Set<string>(), leaf: new Set<string>() };
    const got = { hub: 0, leaf: 0 };
    hub.on("message", (_m, r) => {
      froms.hub.add(`${r.address}:${r.port}`);
      got.hub++;
    });
    leaf.on("message", (_m, r) => {
      froms.leaf.add(`${r.address}:${r.port}`);
      got.leaf++;
    });
    const front = await hopFront();
    hop = await startLossyHop(
      { lossPct: 5, delayMs: 10, seed: 7 },
      { hub: hub.address().port, hubFront: front },
    );
    const h = hop;
    const leafVia = { host: LEAF_VIA, port: leaf.address().port };
    const N = 2000;
    // The leaf first (its packets create the emulator's socket the hub answers to).
    leaf.send(media(2, 0), front, "127.0.0.1");
    await until(() => h.linkem.stats().peers === 1, "the leaf known to the emulator");
    for (let i = 1; i < N; i++) {
      leaf.send(media(2, i), front, "127.0.0.1");
      if (i % 20 === 19) await pace();
    }
    for (let i = 0; i < N; i++) {
      hub.send(media(0, i), leafVia.port, leafVia.host);
      if (i % 20 === 19) await pace();
    }
    const settled = (dir: "up" | "down") => {
      const l = h.linkem.stats().routes[HOP_ROUTE]![dir];
      return l.offered === N && l.delivered + l.lost + l.queueFull === N;
    };
    await until(() => {
      const r = h.linkem.stats().routes[HOP_ROUTE]!;
      return settled("up") && settled("down") && got.hub === r.up.delivered && got.leaf === r.down.delivered;
    }, "every frame offered, and the survivors delivered");
    expect([...froms.hub]).toEqual([`${LEAF_VIA}:${leaf.address().port}`]);
    expect([...froms.leaf]).toEqual([`127.0.0.1:${front}`]);
    for (const dir of ["up", "down"] as const) {
      const f = h.meter.figures(HOP_ROUTE, dir, 10);
      expect(f.frames).toBe(N);
      expect(f.linkLossPct).toBeGreaterThan(3);
      expect(f.linkLossPct).toBeLessThan(7);
      expect(f.lostFarEnd).toBe(f.lostOnLink);
      expect(f.repaired).toBe(0);
      expect(f.duplicatesDelivered).toBe(0);
    }
  });
});
